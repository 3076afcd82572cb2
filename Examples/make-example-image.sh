#!/bin/sh
# Builds the example firmware image used by the README and the tests:
#   Examples/hello-1.1.0.bin  — an unsigned MCUboot image (SHA-256 TLV), version 1.1.0,
#   newer than the simulated device's factory image (1.0.0), so `mcumgr upgrade` installs it.
#
# Needs imgtool (pip install imgtool; CI installs it in .venv). Run from anywhere:
#   sh Examples/make-example-image.sh
set -eu
cd "$(dirname "$0")"
IMGTOOL=${IMGTOOL:-imgtool}

# A tiny, deterministic "application": a text banner padded to 4 KiB.
python3 - <<'PY'
banner = b"Hello from swift-mcumgr's example application, version 1.1.0\n"
body = bytearray(banner)
while len(body) < 4096:
    body.append((len(body) * 7 + 3) & 0xFF)
open("hello-1.1.0.raw", "wb").write(bytes(body))
PY

"$IMGTOOL" sign \
    --header-size 0x200 --pad-header \
    --align 4 \
    --slot-size 0x40000 \
    --version 1.1.0 \
    hello-1.1.0.raw hello-1.1.0.bin
rm -f hello-1.1.0.raw
"$IMGTOOL" verify hello-1.1.0.bin
