#!/usr/bin/env bash
# Runs the whole test suite under ThreadSanitizer and AddressSanitizer, each in its own scratch
# folder (so the normal debug build is left alone), and summarises each run.
#
# The verdict: the run fails if TSan or ASan reports anything (a data race, a use after free, a
# leak, an overflow), or if a test fails. The suite runs in parallel first (the most interleaving
# for TSan); tests with short request timeouts can miss them there, the instrumented build being
# several times slower on two cores, so when any test fails the whole suite runs again one test at
# a time (--no-parallel) under the same sanitizer, and that run must pass. Both runs' reports count.
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
    suite() { # extra swift-test arguments
        LSAN_OPTIONS="suppressions=$root/scripts/lsan.supp:print_suppressions=1${LSAN_OPTIONS:+:$LSAN_OPTIONS}" \
            swift test --skip-build --sanitize="$kind" --scratch-path "$scratch" "$@" >>"$log" 2>&1
    }
    suite
    tested=$(date +%s)
    summary=$(grep -E "^[✔✘] Test run" "$log" | tail -1)
    summary=${summary:-"no summary: the run stopped (see $log)"}
    again=false serial=""
    if [[ $summary != ✔* ]]; then
        again=true
        missed=$(grep -E "✘ Test .* recorded an issue" "$log" | sed -E 's/ recorded an issue.*//; s/^✘ Test /   /' | sort -u)
        echo "--- again, one test at a time" >>"$log"
        mark=$(wc -l <"$log")
        suite --no-parallel
        serial=$(tail -n +"$((mark + 1))" "$log" | grep -E "^[✔✘] Test run" | tail -1)
        [[ -n $serial ]] || serial="no summary: the run stopped (see $log)"
    fi
    done_at=$(date +%s)
    case $kind in
        thread) pattern="WARNING: ThreadSanitizer" ;;
        address) pattern="ERROR: AddressSanitizer|ERROR: LeakSanitizer" ;;
        *) pattern="Sanitizer" ;;
    esac
    reports=$(grep -cE "$pattern" "$log" || true)
    echo "== $kind: build $((built - start)) s, suite $((tested - built)) s, sanitizer reports: $reports"
    echo "   in parallel: $summary"
    if $again; then
        echo "   failed in parallel:"
        echo "$missed"
        echo "   one at a time ($((done_at - tested)) s): $serial"
        [[ $serial == ✔* ]] || failed=1
    fi
    if [[ $reports -gt 0 ]]; then
        grep -E -A20 "$pattern" "$log" | head -60
        failed=1
    fi
done
exit $failed
