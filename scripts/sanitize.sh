#!/usr/bin/env bash
# Runs the whole test suite under ThreadSanitizer and AddressSanitizer, each in its own scratch
# folder (so the normal debug build is left alone), and summarises each run.
#
# The verdict is the sanitizer's: the run fails if TSan or ASan reports anything (a data race, a
# use after free, a leak, an overflow). Tests that fail only because the instrumented build is
# many times slower (short request timeouts of fault tests) are listed, not counted as findings.
#
# Usage, from the repository root: scripts/sanitize.sh [thread|address ...]   (default: both)
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
export PATH="$root/.venv/bin:$PATH" MCUMGR_PEERS_VENV="${MCUMGR_PEERS_VENV:-$root/.venv}"
kinds=("$@")
[[ ${#kinds[@]} -eq 0 ]] && kinds=(thread address)
failed=0
for kind in "${kinds[@]}"; do
    scratch="$root/.build-sanitize-$kind"
    log="$scratch.log"
    start=$(date +%s)
    swift build --build-tests --sanitize="$kind" --scratch-path "$scratch" >"$log" 2>&1 || {
        echo "== $kind: build failed (see $log)"
        failed=1
        continue
    }
    built=$(date +%s)
    # LeakSanitizer's known false reports on Swift's pointer encodings, and XCTest's own objects at
    # exit, are suppressed by scripts/lsan.supp (each entry says why); everything else counts.
    LSAN_OPTIONS="suppressions=$root/scripts/lsan.supp:print_suppressions=1${LSAN_OPTIONS:+:$LSAN_OPTIONS}" \
        swift test --skip-build --sanitize="$kind" --scratch-path "$scratch" >>"$log" 2>&1
    done_at=$(date +%s)
    case $kind in
        thread) pattern="WARNING: ThreadSanitizer" ;;
        address) pattern="ERROR: AddressSanitizer|ERROR: LeakSanitizer" ;;
        *) pattern="Sanitizer" ;;
    esac
    reports=$(grep -cE "$pattern" "$log" || true)
    echo "== $kind: build $((built - start)) s, tests $((done_at - built)) s, sanitizer reports: $reports"
    grep -E "^✔ Test run|^✘ Test run" "$log" | tail -1
    grep -E "✘ Test .* recorded an issue" "$log" | sed -E 's/ recorded an issue.*//; s/^✘ /   failed (timing under instrumentation?): /' | sort -u
    if [[ $reports -gt 0 ]]; then
        grep -E -A20 "$pattern" "$log" | head -60
        failed=1
    fi
done
exit $failed
