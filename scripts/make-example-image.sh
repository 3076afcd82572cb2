#!/usr/bin/env bash
# Makes example MCUboot inputs with imgtool (from .venv or $MCUMGR_PEERS_VENV) for trying
# `mcumgr image info` and for the memory note in docs/MCUBOOT.md:
#   OUT/key-ecdsa-p256.pem         signing key (private, PKCS#8, as imgtool keygen writes it)
#   OUT/app.signed.bin             signed image of SIZE bytes in total (default 64 KiB)
#   OUT/dfu_application.zip        the image in an nRF Connect SDK style zip with manifest.json
# Usage: scripts/make-example-image.sh OUT [SIZE]
set -euo pipefail
out="${1:?usage: $0 OUT [SIZE]}"
size="${2:-65536}"
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="${MCUMGR_PEERS_VENV:-$root/.venv}"
imgtool="$venv/bin/imgtool"
python="$venv/bin/python3"
mkdir -p "$out"
# Header 0x200 + payload + TLV area (SHA256, KEYHASH, ECDSA signature: at most 0x9c bytes).
payload=$((size - 0x200 - 0x98))
"$python" -c "import random, sys; random.seed(1); open(sys.argv[1], 'wb').write(random.randbytes(int(sys.argv[2])))" \
    "$out/app.bin" "$payload"
[ -f "$out/key-ecdsa-p256.pem" ] || "$imgtool" keygen -k "$out/key-ecdsa-p256.pem" -t ecdsa-p256
slot=$(( (size + 0x10000) / 0x1000 * 0x1000 ))
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
