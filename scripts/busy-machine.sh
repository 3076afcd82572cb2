#!/usr/bin/env bash
# The whole suite, PASSES times in a row (default 5), while stress-ng keeps every core busy with
# another process (issue 20: `swift test` must pass on a busy machine). Run it on an otherwise idle
# machine, after scripts/setup-peers.sh; it starts a private PostgreSQL server for the fleet tests
# as .ci/run does, and runs with CI=true so that no peer test is skipped. One line per pass, then
# the failing tests of that pass, if any; the exit status is the number of failed passes.
# Usage, from the repository root: scripts/busy-machine.sh [PASSES] [STRESSORS]
#   STRESSORS: CPU stressors (default: one per core). Installs stress-ng with apt-get if missing.
set -euo pipefail
cd "$(dirname "$0")/.."
passes=${1:-5}
stressors=${2:-$(nproc)}
command -v stress-ng >/dev/null || {
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq stress-ng >/dev/null
}
export PATH="$PWD/.venv/bin:$PATH" MCUMGR_PEERS_VENV="$PWD/.venv" CI=true

logs="$(mktemp -d /tmp/mcumgr-busy.XXXXXX)"
pgdir="$logs/postgres"
mkdir -p "$pgdir" && chmod 755 "$logs" "$pgdir"
eval "$(bash scripts/postgres-test-server.sh start "$pgdir" 55434)"
stress=""
cleanup() {
    [ -n "$stress" ] && kill "$stress" 2>/dev/null || true
    bash scripts/postgres-test-server.sh stop "$pgdir" >/dev/null 2>&1 || true
}
trap cleanup EXIT

# Built before the load starts: the passes measure the tests, not the compiler.
swift build --build-tests >"$logs/build.log" 2>&1 || { echo "build failed: $logs/build.log"; exit 1; }
stress-ng --cpu "$stressors" --timeout 0 >/dev/null 2>&1 &
stress=$!
echo "stress-ng --cpu $stressors running (pid $stress); logs in $logs"

failed=0
for pass in $(seq 1 "$passes"); do
    start=$(date +%s)
    status=0
    swift test --skip-build >"$logs/pass-$pass.log" 2>&1 || status=$?
    # A run that ends without its summary line (killed by a signal) is a failed pass too, and
    # must not end the script (grep finding nothing fails under pipefail).
    summary=$(grep -E "Test run with" "$logs/pass-$pass.log" | tail -1 || true)
    echo "pass $pass: exit $status in $(($(date +%s) - start)) s: ${summary:-no summary line}"
    if [ "$status" -ne 0 ] || [ -z "$summary" ]; then
        failed=$((failed + 1))
        grep -E "✘ Test .* recorded an issue|unexpected signal" "$logs/pass-$pass.log" | cut -c1-300 | head -20 || true
    fi
done
exit "$failed"
