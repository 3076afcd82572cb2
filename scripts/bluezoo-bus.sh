#!/usr/bin/env bash
# A Bluetooth "radio" without a radio, for trying `mcumgr ble scan`, `ble://` and
# `mcumgr simulator --ble` on a machine without Bluetooth: a private dbus-daemon used as the system
# bus, and bluezoo (PyPI, installed by scripts/setup-peers.sh) mocking BlueZ on it with two adapters
# that see and connect to each other, hci0 (00:AA:01:00:00:01) and hci1 (00:AA:01:00:00:02).
#
# Usage: scripts/bluezoo-bus.sh [FOLDER]     (default /tmp/mcumgr-bluezoo; Ctrl-C stops both)
# then, in other shells:   export DBUS_SYSTEM_BUS_ADDRESS=unix:path=FOLDER/bus
#
# bluezoo 1.0.2 connects a device once per process: after a `mcumgr` command disconnects, the next
# one connecting needs a fresh bluezoo (Ctrl-C and start this again, or `kill -HUP` this script's
# pid, which restarts bluezoo alone). See docs/BLE.md for what bluezoo does not model.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
folder=${1:-/tmp/mcumgr-bluezoo}
venv=${MCUMGR_PEERS_VENV:-$root/.venv}
bluezoo=$venv/bin/bluezoo
command -v dbus-daemon >/dev/null || { echo "error: dbus-daemon is missing (apt-get install dbus-daemon)" >&2; exit 1; }
[[ -x $bluezoo ]] || { echo "error: $bluezoo is missing (scripts/setup-peers.sh installs it)" >&2; exit 1; }
mkdir -p "$folder"
rm -f "$folder/bus"
cat >"$folder/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>mcumgr-bluezoo</type>
  <listen>unix:path=$folder/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
  </policy>
  <limit name="max_replies_per_connection">128</limit>
</busconfig>
CONF
dbus-daemon --config-file="$folder/bus.conf" --nofork --nopidfile 2>"$folder/dbus-daemon.log" &
daemon=$!
zoo=""
start_bluezoo() {
    DBUS_SYSTEM_BUS_ADDRESS=unix:path=$folder/bus "$bluezoo" --auto-enable --scan-interval 1 \
        -a 00:AA:01:00:00:01 -a 00:AA:01:00:00:02 2>>"$folder/bluezoo.log" &
    zoo=$!
}
stop_all() {
    [[ -n $zoo ]] && kill "$zoo" 2>/dev/null || true
    kill "$daemon" 2>/dev/null || true
    wait 2>/dev/null || true
}
trap stop_all EXIT
# Under `set -e` a trap's failing command ends the script: `wait` returns bluezoo's 143 (its
# SIGTERM), which stopped the whole bus instead of restarting bluezoo.
restart_bluezoo() {
    kill "$zoo" 2>/dev/null || true
    wait "$zoo" 2>/dev/null || true
    start_bluezoo
    echo "bluezoo restarted (pid $zoo)" >&2
}
trap restart_bluezoo HUP
for _ in $(seq 100); do [[ -S $folder/bus ]] && break; sleep 0.05; done
start_bluezoo
echo "export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$folder/bus"
echo "bluezoo: hci0 00:AA:01:00:00:01, hci1 00:AA:01:00:00:02 (log: $folder/bluezoo.log); Ctrl-C stops" >&2
while kill -0 "$daemon" 2>/dev/null; do sleep 1 & wait $! || true; done
