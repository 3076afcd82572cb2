#!/usr/bin/env bash
# The 200-device rollout (issue 22): wall time of `mcumgr fleet upgrade` over 200 simulated
# devices against one device upgraded alone, and against a shell loop of `smpmgr upgrade` over
# the same kind of devices (a sample of SAMPLE devices, extrapolated linearly to 200: a loop
# upgrades one device after another, so its time is the sum of the devices' times). CPU seconds
# and peak memory of the fleet process from /usr/bin/time -v.
# Every device: `mcumgr simulator` defaults (Zephyr's observed buffers and reset timing), 20 ms
# added to every response; a 256 KiB signed image (Examples/make-example-image.sh --signed).
# Usage: Benchmarks/fleet-rollout.sh [COUNT] [SAMPLE]   (from the package root; MCUMGR=path to
# use a built mcumgr instead of building the release one)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
count="${1:-200}"
sample="${2:-5}"
venv="${MCUMGR_PEERS_VENV:-$root/.venv}"
work="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
if [[ -z "${MCUMGR:-}" ]]; then
    swift build -c release --product mcumgr >/dev/null
    MCUMGR="$root/.build/release/mcumgr"
fi
Examples/make-example-image.sh --signed "$work" 258048 >/dev/null
image="$work/app.signed.bin"
now() { date +%s.%N; }

# The fleet.
"$MCUMGR" simulator --udp 127.0.0.1:0 --count "$count" --latency-ms 20 >"$work/fleet.txt" 2>"$work/fleet.err" &
while [[ $(wc -l <"$work/fleet.txt") -lt $count ]]; do sleep 0.2; done
/usr/bin/time -v "$MCUMGR" fleet upgrade "$image" --inventory "$work/fleet.txt" --state "$work/state.sqlite" \
    --parallel "$count" >"$work/rollout.out" 2>"$work/rollout.err" || { tail -5 "$work/rollout.err"; exit 1; }
fleet_time=$(grep "Elapsed (wall clock)" "$work/rollout.err" | awk '{print $NF}')
cpu=$(awk -F': ' '/User time/{u=$2} /System time/{s=$2} END{print u+s}' "$work/rollout.err")
rss=$(awk -F': ' '/Maximum resident/{print $2}' "$work/rollout.err")
tail -1 "$work/rollout.out"

# One device alone.
"$MCUMGR" simulator --udp 127.0.0.1:0 --latency-ms 20 >"$work/one.txt" 2>/dev/null &
while [[ ! -s "$work/one.txt" ]]; do sleep 0.2; done
start=$(now)
"$MCUMGR" --conn "$(head -1 "$work/one.txt")" upgrade "$image" >/dev/null 2>&1
one=$(echo "$(now) - $start" | bc)

# smpmgr in a loop, on a sample (smpmgr has no port option: one device per loopback address).
total=0
for n in $(seq 1 "$sample"); do
    "$MCUMGR" simulator --udp "127.0.1.$n:1337" --latency-ms 20 >/dev/null 2>&1 &
    sleep 1
    start=$(now)
    "$venv/bin/smpmgr" --ip "127.0.1.$n" upgrade "$image" >/dev/null 2>&1
    total=$(echo "$total + $(now) - $start" | bc)
done
per=$(echo "scale=2; $total / $sample" | bc)
loop=$(echo "scale=1; $per * $count" | bc)

echo "| measure | value |"
echo "|---|---:|"
echo "| fleet upgrade, $count devices, wall | $fleet_time |"
echo "| one device alone (mcumgr upgrade), wall | $(printf '%.1f' "$one") s |"
echo "| smpmgr upgrade, per device (mean of $sample) | $per s |"
echo "| smpmgr loop over $count devices (extrapolated) | $loop s |"
echo "| fleet process CPU (user + system) | $cpu s |"
echo "| fleet process peak RSS | $rss KiB |"
