#!/usr/bin/env bash
# Screenshots of every screen of `mcumgr ui` for docs/UI.md, taken by the browser tests' own
# driver (Tests/Browser/drive-ui.py) in headless Chromium against a simulated device on UDP.
# Needs the peers (scripts/setup-peers.sh) and Debian's chromium. Usage: scripts/ui-screenshots.sh [OUT]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/docs/ui}
mkdir -p "$out"
cd "$root"
swift build --product mcumgr >/dev/null
mcumgr="$(swift build --show-bin-path)/mcumgr"
python="$root/.venv/bin/python"
scratch=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$scratch"' EXIT

"$mcumgr" simulator --udp 127.0.0.1:0 --count 4 >"$scratch/device" &
pids+=($!)
MCUMGR_CONFIG_DIR="$scratch" "$mcumgr" ui --listen 127.0.0.1:0 >"$scratch/page" &
pids+=($!)
for _ in $(seq 100); do
    [ "$(wc -l <"$scratch/device")" -ge 4 ] && [ -s "$scratch/page" ] && break
    sleep 0.1
done
device=$(head -1 "$scratch/device" | cut -d' ' -f1)
page=$(head -1 "$scratch/page")
head -c 3000 /dev/urandom >"$scratch/notes.bin"
"$python" Tests/Browser/drive-ui.py upgrade "$page" "$device" Examples/hello-1.1.0.bin "$out" >/dev/null
"$python" Tests/Browser/drive-ui.py files-and-shell "$page" "$device" "$scratch/notes.bin" "$out" >/dev/null
"$python" Tests/Browser/drive-ui.py tour "$page" "$device" - "$out" >/dev/null
# The Fleet screen over the other three devices.
"$python" Tests/Browser/drive-ui.py fleet "$page" "$(tail -n 3 "$scratch/device")" Examples/hello-1.1.0.bin "$out" >/dev/null
# The Simulator screen: ten devices the page starts itself, then a rollout over them.
"$python" Tests/Browser/drive-ui.py simulator "$page" - Examples/hello-1.1.0.bin "$out" >/dev/null
"$python" Tests/Browser/drive-ui.py appearance "$page" - - "$out" >/dev/null
ls "$out"
