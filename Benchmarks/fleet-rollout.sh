#!/usr/bin/env bash
# The 200-device rollout (issue 22): wall time of `mcumgr fleet upgrade` over 200 simulated
# devices against one device upgraded alone, and against a shell loop of `smpmgr upgrade` over
# the same kind of devices (a sample of SAMPLE devices, extrapolated linearly to 200: a loop
# upgrades one device after another, so its time is the sum of the devices' times). CPU seconds
# and peak memory of the fleet process from /usr/bin/time -v. After the rollout, every device's image
# list is read by an independent client (smpclient, Benchmarks/read-images.py, 16 devices at a
# time): how many run the new image (version and hash) active and confirmed, and which do not.
# Every device: `mcumgr simulator` defaults (Zephyr's observed buffers and reset timing), 20 ms
# added to every response; a 256 KiB signed image (Examples/make-example-image.sh --signed).
# Usage: Benchmarks/fleet-rollout.sh [COUNT] [SAMPLE]   (from the package root; MCUMGR=path to
# use a built mcumgr instead of building the release one; COUNT at most 1024, the limit of
# `fleet upgrade --parallel`; MCUMGR_PEERS_VENV=the virtualenv with imgtool, smpclient, smpmgr)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
count="${1:-200}"
sample="${2:-5}"
if ! [[ $count =~ ^[0-9]+$ ]] || ((count < 1 || count > 1024)); then
    echo "fleet-rollout.sh: COUNT must be between 1 and 1024 (--parallel COUNT), not $count" >&2
    exit 2
fi
venv="${MCUMGR_PEERS_VENV:-$root/.venv}"
work="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
if [[ -z "${MCUMGR:-}" ]]; then
    swift build -c release --product mcumgr >/dev/null
    MCUMGR="$root/.build/release/mcumgr"
fi
Examples/make-example-image.sh --signed "$work" 258048 >/dev/null
image="$work/app.signed.bin"
version="1.2.3+4"   # the version make-example-image.sh --signed gives the image
now() { date +%s.%N; }

# The fleet.
"$MCUMGR" simulator --udp 127.0.0.1:0 --count "$count" --latency-ms 20 >"$work/fleet.txt" 2>"$work/fleet.err" &
fleet_pid=$!
while [[ $(wc -l <"$work/fleet.txt") -lt $count ]]; do
    kill -0 "$fleet_pid" 2>/dev/null || { echo "the simulated fleet ended:" >&2; tail -5 "$work/fleet.err" >&2; exit 1; }
    sleep 0.2
done
/usr/bin/time -v "$MCUMGR" fleet upgrade "$image" --inventory "$work/fleet.txt" --state "$work/state.sqlite" \
    --parallel "$count" >"$work/rollout.out" 2>"$work/rollout.err" || { tail -5 "$work/rollout.err"; exit 1; }
fleet_time=$(grep "Elapsed (wall clock)" "$work/rollout.err" | awk '{print $NF}')
cpu=$(awk -F': ' '/User time/{u=$2} /System time/{s=$2} END{print u+s}' "$work/rollout.err")
rss=$(awk -F': ' '/Maximum resident/{print $2}' "$work/rollout.err")
fleet_seconds=$(echo "$fleet_time" | awk -F: '{s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; print s}')
grep -v -e '^sim-[0-9]' -e '^DEVICE ' "$work/rollout.out" || true   # the rollout's summary lines

# Every device's image list, read afterwards by smpclient.
verified=0
"$venv/bin/python3" Benchmarks/read-images.py "$work/fleet.txt" --expect "$version" --image "$image" \
    >"$work/verify.out" 2>&1 || verified=$?
cat "$work/verify.out"
((verified <= 1)) || { echo "read-images.py failed (status $verified)" >&2; exit 1; }
verify_line=$(head -1 "$work/verify.out")

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
ratio=$(echo "scale=2; $fleet_seconds / $one" | bc)

echo "| measure | value |"
echo "|---|---:|"
echo "| fleet upgrade, $count devices, wall | $fleet_time |"
echo "| one device alone (mcumgr upgrade), wall | $(printf '%.1f' "$one") s |"
echo "| $count devices ÷ one device | ${ratio}× |"
echo "| smpmgr upgrade, per device (mean of $sample) | $per s |"
echo "| smpmgr loop over $count devices (extrapolated) | $loop s |"
echo "| fleet process CPU (user + system) | $cpu s |"
echo "| fleet process peak RSS | $rss KiB |"
echo "| image lists read afterwards by smpclient | ${verify_line%% (*} |"
exit "$verified"   # 1 when some device does not run the new image, active and confirmed
