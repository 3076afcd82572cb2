#!/usr/bin/env bash
# What a simulated fleet costs while nobody talks to it (issue 28, item 7): the threads of
# `mcumgr simulator --count COUNT` and the CPU seconds (user + system, from /proc) it uses over
# SECONDS once every device is served. Give two builds to compare them in one run, side by side.
# Usage: Benchmarks/simulator-idle.sh [COUNT] [SECONDS] [MCUMGR...]   (default: the debug build)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
count="${1:-1000}"
seconds="${2:-10}"
shift $(( $# < 2 ? $# : 2 ))
binaries=("$@")
[[ ${#binaries[@]} -gt 0 ]] || binaries=("$root/.build/debug/mcumgr")
work="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
ticks=$(getconf CLK_TCK)
cpu() { awk -v t="$ticks" '{ printf "%.2f", ($14 + $15) / t }' "/proc/$1/stat"; }
printf '| build | devices | threads | CPU over %s s | share of a core |\n|---|---:|---:|---:|---:|\n' "$seconds"
for mcumgr in "${binaries[@]}"; do
    "$mcumgr" simulator --udp 127.0.0.1:0 --count "$count" >"$work/fleet.txt" 2>"$work/fleet.err" &
    pid=$!
    while [[ $(wc -l <"$work/fleet.txt") -lt $count ]]; do
        kill -0 "$pid" 2>/dev/null || { cat "$work/fleet.err" >&2; exit 1; }
        sleep 0.2
    done
    sleep 2
    before=$(cpu "$pid")
    sleep "$seconds"
    after=$(cpu "$pid")
    threads=$(awk '/^Threads:/ { print $2 }' "/proc/$pid/status")
    kill -INT "$pid"
    wait "$pid" 2>/dev/null || true
    awk -v m="$mcumgr" -v c="$count" -v t="$threads" -v a="$after" -v b="$before" -v s="$seconds" \
        'BEGIN { printf "| %s | %s | %s | %.2f s | %.1f %% |\n", m, c, t, a - b, 100 * (a - b) / s }'
done
