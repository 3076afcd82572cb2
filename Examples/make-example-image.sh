#!/usr/bin/env bash
# Makes the example MCUboot inputs with imgtool (from $IMGTOOL, .venv or $MCUMGR_PEERS_VENV, or PATH).
#
#   Examples/make-example-image.sh
#       Examples/hello-1.1.0.bin — the image the README and the tests upgrade to: unsigned (a
#       SHA-256 TLV only), version 1.1.0, newer than the simulated device's factory image (1.0.0),
#       4 KiB of a banner and a deterministic pattern, so the same bytes every time.
#
#   Examples/make-example-image.sh --signed OUT [SIZE]
#       For trying `mcumgr image info` and for the benchmarks and the memory note in
#       docs/MCUBOOT.md, in the folder OUT:
#         key-ecdsa-p256.pem     signing key (private, PKCS#8, as imgtool keygen writes it; kept
#                                when it exists)
#         app.signed.bin         signed image of SIZE bytes in total (default 64 KiB), version 1.2.3+4
#         dfu_application.zip    the image in an nRF Connect SDK style zip with manifest.json
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="${MCUMGR_PEERS_VENV:-$root/.venv}"
if [ -n "${IMGTOOL:-}" ]; then
    imgtool="$IMGTOOL"
elif [ -x "$venv/bin/imgtool" ]; then
    imgtool="$venv/bin/imgtool"
else
    imgtool=imgtool
fi
python="python3"
[ -x "$venv/bin/python3" ] && python="$venv/bin/python3"

if [ "${1:-}" != "--signed" ]; then
    cd "$root/Examples"
    # A tiny, deterministic "application": a text banner padded to 4 KiB.
    "$python" - <<'PY'
banner = b"Hello from swift-mcumgr's example application, version 1.1.0\n"
body = bytearray(banner)
while len(body) < 4096:
    body.append((len(body) * 7 + 3) & 0xFF)
open("hello-1.1.0.raw", "wb").write(bytes(body))
PY
    "$imgtool" sign --header-size 0x200 --pad-header --align 4 --slot-size 0x40000 --version 1.1.0 \
        hello-1.1.0.raw hello-1.1.0.bin
    rm -f hello-1.1.0.raw
    "$imgtool" verify hello-1.1.0.bin
    exit 0
fi

out="${2:?usage: $0 --signed OUT [SIZE]}"
size="${3:-65536}"
mkdir -p "$out"
# Header 0x200 + payload + TLV area (SHA256, KEYHASH, ECDSA signature: at most 0x9c bytes).
payload=$((size - 0x200 - 0x98))
"$python" -c "import random, sys; random.seed(1); open(sys.argv[1], 'wb').write(random.randbytes(int(sys.argv[2])))" \
    "$out/app.bin" "$payload"
[ -f "$out/key-ecdsa-p256.pem" ] || "$imgtool" keygen -k "$out/key-ecdsa-p256.pem" -t ecdsa-p256
slot=$(((size + 0x10000) / 0x1000 * 0x1000))
"$imgtool" sign --align 4 --header-size 0x200 --slot-size "$slot" --pad-header --version 1.2.3+4 \
    --key "$out/key-ecdsa-p256.pem" "$out/app.bin" "$out/app.signed.bin"
"$python" - "$out" <<'PY'
import json, os, sys, time, zipfile
out = sys.argv[1]
image = os.path.join(out, "app.signed.bin")
manifest = {"format-version": 0, "time": int(time.time()), "name": "example", "files": [{
    "load_address": 0x10000, "image_index": "0", "slot_index_primary": "1", "slot_index_secondary": "2",
    "version_MCUBOOT": "1.2.3+4", "type": "application", "board": "example", "soc": "example",
    "size": os.path.getsize(image), "file": "app.bin", "modtime": int(os.path.getmtime(image))}]}
with zipfile.ZipFile(os.path.join(out, "dfu_application.zip"), "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("manifest.json", json.dumps(manifest, indent=4))
    z.write(image, "app.bin")
PY
rm -f "$out/app.bin"
ls -l "$out"
