#!/usr/bin/env bash
# Installs the independent peer tools the tests use as oracles into .venv in the package root:
# smp and cbor2 (bytes), imgtool (images), smpclient/smpmgr and mcumgr-toolkit (clients that drive
# our simulated device), and mcumgr-client-wrapper (the Rust mcumgr-client, a serial-recovery
# client). Versions are pinned to the ones the reference facts were checked with.
# For Bluetooth LE without a radio: bluezoo (a mock of BlueZ's D-Bus API; its adapters see and
# connect to each other over a private dbus-daemon) and dbus-fast (the D-Bus golden vectors; bleak,
# smpclient's BLE backend on Linux, uses it too). The test peripheral uses Debian's python3-dbus
# (dbus-python, the reference binding), which .ci/run installs with apt when it is missing.
# Bumble (Google's Python Bluetooth stack) gives virtual LE controllers over HCI and a host of its
# own: Tests/Bumble's rig, its SMP peripheral, and smpclient's Bumble transport as a central.
# Playwright drives Debian's chromium (installed by .ci/run) in the browser tests of `mcumgr ui`;
# it never downloads a browser of its own.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-python3}
if [ ! -x "$root/.venv/bin/python" ]; then
    "$python" -m venv "$root/.venv"
fi
"$root/.venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
"$root/.venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    "smp==4.2.0" "smpclient==7.3.0" "smpmgr==0.19.1" "imgtool==2.5.0" "cbor2>=6.2,<7" "mcumgr-toolkit==0.20.0" \
    "mcumgr-client-wrapper==0.3.0" "bluezoo==1.0.2" "dbus-fast==5.2.0" \
    "playwright==1.65.2" "bumble==0.0.228"
# Every peer must import and run; a partial install fails here rather than as skipped tests.
"$root/.venv/bin/python" - <<'PY'
import importlib, sys
for module in ["smp", "smpclient", "cbor2", "imgtool", "mcumgr_toolkit", "mcumgr_client", "bluezoo", "dbus_fast",
               "bleak", "playwright", "bumble", "smpclient.transport.bumble"]:
    importlib.import_module(module)
print("peers: python modules ok")
PY
for tool in imgtool smpmgr bluezoo; do
    "$root/.venv/bin/$tool" --help >/dev/null
done
echo "peers: installed in $root/.venv"
