#!/usr/bin/env bash
# Whole-upgrade time of a 1 MiB image, ours vs smpmgr and mcumgr-toolkit, in one run.
# Each client gets a fresh `mcumgr simulator` on 127.0.0.1 (UDP, 20 ms added to every
# response, 2 MiB slots); wall-clock time of the whole command. Peers come from .venv
# (scripts/setup-peers.sh). smpmgr has no port option, so its simulator listens on 1337.
# Usage: Benchmarks/upgrade-vs-peers.sh   (from the package root)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
venv="${MCUMGR_PEERS_VENV:-$root/.venv}"
work="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

swift build -c release --product mcumgr >/dev/null
mcumgr="$root/.build/release/mcumgr"
Examples/make-example-image.sh --signed "$work" 1048576 >/dev/null
image="$work/app.signed.bin"

cat > "$work/toolkit.py" <<'PY'
import sys, mcumgr_toolkit as m
client = m.MCUmgrClient.udp("127.0.0.1", port=int(sys.argv[1]), timeout_ms=5000)
client.use_auto_frame_size()
client.firmware_update(open(sys.argv[2], "rb").read())
PY

run() {
    local name=$1 port=$2
    shift 2
    "$mcumgr" simulator --udp "127.0.0.1:$port" --latency-ms 20 --slot-size 0x200000 >"$work/sim-$port.log" 2>&1 &
    local sim=$!
    sleep 1.5
    local start end
    start=$(date +%s.%N)
    if "$@" >"$work/$name.log" 2>&1; then status=ok; else status="failed ($(tail -1 "$work/$name.log"))"; fi
    end=$(date +%s.%N)
    printf '| %s | %.1f s | %s |\n' "$name" "$(echo "$end - $start" | bc)" "$status"
    kill "$sim"
    wait "$sim" 2>/dev/null || true
}

echo "| client | time | result |"
echo "|---|---:|---|"
run "mcumgr upgrade --mode test-and-confirm" 14011 "$mcumgr" --conn udp://127.0.0.1:14011 upgrade "$image" --mode test-and-confirm
run "mcumgr upgrade --mode test-only" 14012 "$mcumgr" --conn udp://127.0.0.1:14012 upgrade "$image" --mode test-only
run "mcumgr upgrade --mode test-only --window 1" 14013 "$mcumgr" --conn udp://127.0.0.1:14013 upgrade "$image" --mode test-only --window 1
run "smpmgr upgrade" 1337 "$venv/bin/smpmgr" --ip 127.0.0.1 upgrade "$image"
run "mcumgr-toolkit firmware_update" 14015 "$venv/bin/python" "$work/toolkit.py" 14015 "$image"
