#!/usr/bin/env bash
# Regenerates the committed MCUboot fixtures with imgtool 2.5.0 and cbor2 (the peers in .venv).
# The keys are made fresh and only their public halves are kept, so signatures differ on each run;
# expected.json records what imgtool itself reports for the images that were committed.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="${MCUMGR_PEERS_VENV:-$here/../../../.venv}"
imgtool="$venv/bin/imgtool"
python="$venv/bin/python3"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"

"$python" -c "open('app.bin','wb').write(bytes(range(256))*4)"   # 1024-byte deterministic payload
"$imgtool" keygen -k p256.pem -t ecdsa-p256
"$imgtool" keygen -k ed25519.pem -t ed25519
common=(--align 4 --header-size 0x200 --slot-size 0x2000 --pad-header)
"$imgtool" create "${common[@]}" --version 1.2.3 app.bin "$here/unsigned.bin"
"$imgtool" create "${common[@]}" --version 1.2.3+7 --key p256.pem --security-counter auto \
    --dependencies "(1,1.0.0)" app.bin "$here/ecdsa_p256_protected.bin"
"$imgtool" create "${common[@]}" --version 2.0.0 --key ed25519.pem --pure app.bin "$here/ed25519_pure.bin"
"$imgtool" create "${common[@]}" --version 1.2.3 --key p256.pem --pad --confirm app.bin "$here/padded_confirmed.bin"
"$imgtool" getpub -k p256.pem -e pem > "$here/ecdsa_p256.pub.pem"
"$imgtool" getpub -k ed25519.pem -e pem > "$here/ed25519.pub.pem"

# What imgtool says about each committed image: header, TLVs, trailer, verify digest.
"$python" - "$here" "$imgtool" <<'PY'
import json, subprocess, sys
here, imgtool = sys.argv[1], sys.argv[2]
out = {}
for name in ["unsigned.bin", "ecdsa_p256_protected.bin", "ed25519_pure.bin", "padded_confirmed.bin"]:
    info = json.loads(subprocess.run([imgtool, "dumpinfo", "-f", "json", f"{here}/{name}"],
                                     check=True, capture_output=True, text=True).stdout)
    verify = subprocess.run([imgtool, "verify", f"{here}/{name}"], capture_output=True, text=True).stdout
    digest = [l.split(": ")[1] for l in verify.splitlines() if l.startswith("Image digest")]
    out[name] = {"header": info["header"], "tlv_area": info["tlv_area"], "trailer": info["trailer"],
                 "digest": digest[0] if digest else None}
json.dump(out, open(f"{here}/expected.json", "w"), indent=1, sort_keys=True)
PY

# A deflate-compressed nRF Connect SDK style zip (app core + net core, image_index strings, hex load address).
"$python" - "$here" <<'PY'
import json, sys, zipfile
here = sys.argv[1]
manifest = {"format-version": 0, "time": 1700000000, "name": "fixture", "files": [
    {"load_address": 0xc000, "image_index": "0", "slot_index_primary": "1", "slot_index_secondary": "2",
     "version_MCUBOOT": "1.2.3+7", "type": "application", "board": "nrf5340dk/nrf5340/cpuapp",
     "soc": "nrf5340", "size": 0, "file": "app update.bin", "modtime": 1700000000},
    {"load_address": 0x1000000, "image_index": "1", "slot_index_primary": "3", "slot_index_secondary": "4",
     "version": "1", "type": "application", "board": "nrf5340dk/nrf5340/cpunet", "soc": "nRF5340_CPUNET_QKAA",
     "size": 0, "file": "net_core_app_update.bin", "modtime": 1700000000}]}
app = open(f"{here}/ecdsa_p256_protected.bin", "rb").read()
net = open(f"{here}/unsigned.bin", "rb").read()
manifest["files"][0]["size"] = len(app)
manifest["files"][1]["size"] = len(net)
with zipfile.ZipFile(f"{here}/dfu_application.zip", "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("manifest.json", json.dumps(manifest, indent=4))
    z.writestr("app update.bin", app)
    z.writestr("net_core_app_update.bin", net)
PY

# The SUIT envelope of RFC 9124 Appendix B.1 (Example 0); its digest is 6658ea56…e5af.
"$python" - "$here" <<'PY'
import cbor2, sys
here = sys.argv[1]
d = cbor2.dumps
common = d({2: [[b"\x00"]], 4: d([20, {1: bytes.fromhex("fa6b4a53d5ad5fdfbe9de663e4d41ffe"),
    2: bytes.fromhex("1492af1425695e48bf429b2d51f2ab45"),
    3: d([-16, bytes.fromhex("00112233445566778899aabbccddeeff0123456789abcdeffedcba9876543210")]),
    14: 34768}, 1, 15, 2, 15])})
manifest = d({1: 1, 2: 0, 3: common, 7: d([3, 15]), 9: d([23, 2])})
import hashlib
digest = hashlib.sha256(d(manifest)).digest()
signature = d(cbor2.CBORTag(18, [d({1: -7}), {}, None, bytes(64)]))
wrapper = d([d([-16, digest]), signature])
open(f"{here}/rfc9124_example0.suit", "wb").write(d(cbor2.CBORTag(107, {2: wrapper, 3: manifest})))
PY
echo "fixtures written to $here"
