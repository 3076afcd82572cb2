#!/usr/bin/env bash
# Coverage-guided fuzzing (libFuzzer + AddressSanitizer) of every parser that meets untrusted bytes.
# The targets live in Fuzz/ (a package of their own that depends on this one by path); their
# seed corpora in Fuzz/Corpus/<target>/ and dictionaries in Fuzz/Dictionaries/ come from the golden
# vectors (python3 Fuzz/make-corpus.py regenerates them). Linux only (libFuzzer ships with the
# Linux toolchain, not with Xcode's).
#
# Usage, from anywhere in the checkout:
#   scripts/fuzz.sh --list                 the target names, one a line
#   scripts/fuzz.sh --build [TARGET]       build every target (or one) without running
#   scripts/fuzz.sh TARGET [SECONDS] [-- LIBFUZZER-ARGS...]
#                                          build and fuzz one target for SECONDS (default 60; 0 = until
#                                          stopped); new inputs go to .build/fuzz/corpus/TARGET, crashes
#                                          to .build/fuzz/findings/TARGET/, the log to .build/fuzz/logs/
#   scripts/fuzz.sh --smoke [SECONDS]      every target for SECONDS each (default 3), then every input
#                                          of Fuzz/crashes/ replayed (TARGET-what): what CI runs
#   scripts/fuzz.sh --replay TARGET FILE...  run inputs once (reproduce a crash, or check that the
#                                          inputs of Fuzz/crashes/ no longer fail)
# Exits non-zero on any crash, leak, timeout or out-of-memory (libFuzzer's verdict), or build error.
#
# Limits on every run: -rss_limit_mb=1024, -malloc_limit_mb=256 (no input of these sizes may make
# a single allocation that large), -timeout=10 s per input, one process (-jobs=1 equivalent),
# leaks checked after every input (simulator: at exit, see below).
# FUZZ_CONFIGURATION=debug builds unoptimised (slower, better stacks); default release.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scratch="$root/.build/fuzz"
configuration=${FUZZ_CONFIGURATION:-release}

# name  executable  dictionary  max_len  per-input leak check
# The simulator's device runs on Swift concurrency's threads: the task's own memory is freed just
# after the input returns, so libFuzzer's per-input malloc/free balance is off on every input and
# it would run a full LeakSanitizer scan each time (70 instead of 1,500 inputs a second). There
# leaks are checked once, at exit, over the whole run (LeakSanitizer's leak_check_at_exit): an
# unreachable allocation from any input is still reported and fails the run.
targets=(
    "cbor FuzzCBOR cbor 4096 1"
    "smp-frame FuzzSMPFrame smp 4096 1"
    "console-deframer FuzzConsoleDeframer smp 8192 1"
    "raw-deframer FuzzRawDeframer smp 4096 1"
    "ble-reassembly FuzzBLEReassembly smp 4096 1"
    "mcuboot-image FuzzMCUbootImage - 16384 1"
    "package FuzzPackage cbor 16384 1"
    "simulator FuzzSimulator smp 4096 0"
    "url FuzzURL - 1024 1"
    "dbus-message FuzzDBusMessage dbus 8192 1"
    "att FuzzATT att 4096 1"
    "hci FuzzHCI att 4096 1"
)

lookup() {
    local entry
    for entry in "${targets[@]}"; do
        read -r name executable dictionary maxlen leaks <<<"$entry"
        if [[ $name == "$1" ]]; then return 0; fi
    done
    echo "error: unknown fuzz target '$1'; scripts/fuzz.sh --list names them" >&2
    exit 64
}

build() { # [executable]
    local product=()
    if [[ $# -gt 0 ]]; then product=(--product "$1"); fi
    echo "== building fuzz targets ($configuration${1:+, $1}) in .build/fuzz" >&2
    # Same dependency versions as the root package when it has resolved them.
    if [[ -f "$root/Package.resolved" && ! -f "$root/Fuzz/Package.resolved" ]]; then
        cp "$root/Package.resolved" "$root/Fuzz/Package.resolved"
    fi
    local command=(swift build --package-path "$root/Fuzz" --scratch-path "$scratch" -c "$configuration"
        -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library "${product[@]}")
    # Once, linking every target at the same time, ld.gold stopped with "internal error in
    # format_file_lineno"; the same build passed when run again. Retry once, then fail.
    "${command[@]}" >&2 || { echo "== build failed; retrying once" >&2; "${command[@]}" >&2; }
}

binary() { echo "$scratch/$configuration/$1"; }

# Common libFuzzer flags for the current target (set by lookup).
flags() {
    local out=(-rss_limit_mb=1024 -malloc_limit_mb=256 -timeout=10 -max_len="$maxlen" -detect_leaks="$leaks"
        -print_final_stats=1
        -artifact_prefix="$scratch/findings/$name/")
    if [[ $dictionary != - ]]; then out+=(-dict="$root/Fuzz/Dictionaries/$dictionary.dict"); fi
    printf '%s\n' "${out[@]}"
}

run() { # name seconds [extra...]
    lookup "$1"
    local seconds=$2
    shift 2
    local corpus="$scratch/corpus/$name" log
    # Not in the scratch folder's artifacts/: SwiftPM owns that one and deleted a finding there
    # when the next target was built.
    mkdir -p "$corpus" "$scratch/findings/$name" "$scratch/logs"
    log="$scratch/logs/$name-$(date -u +%Y%m%dT%H%M%SZ).log"
    local args=()
    mapfile -t args < <(flags)
    if [[ $seconds != 0 ]]; then args+=(-max_total_time="$seconds"); fi
    echo "== fuzzing $name for ${seconds}s (log: ${log#"$root"/})" >&2
    # New inputs are written to the first corpus directory; the committed seeds stay untouched.
    set +e
    # What grew cbor past the RSS limit with ~30 MB live (5 M inputs: 1025 MB) is ASan's own
    # bookkeeping: the stack depot keeps every distinct allocation stack for good, and the decoder's
    # recursion gives each new nesting of maps and arrays new stacks (400 k inputs: 199 → 334 MB
    # with 30-frame stacks, 181 → 198 MB without; the quarantine adds a flat 256 MB). So sessions
    # record no allocation stacks and keep a 32 MB quarantine (far more than an input frees, so a
    # use after free is still caught): -rss_limit_mb stays a check on the code. A finding's
    # "allocated by" stack comes from --replay, which runs with ASan's defaults.
    SWIFT_BACKTRACE=enable=no \
        ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0:malloc_context_size=0:quarantine_size_mb=32:allocator_release_to_os_interval_ms=500} \
        "$(binary "$executable")" "${args[@]}" "$@" "$corpus" "$root/Fuzz/Corpus/$name" >"$log" 2>&1
    local status=$?
    set -e
    grep -E '^(#[0-9]+[[:space:]]+DONE|Done [0-9]+ runs|stat::number_of_executed_units|stat::peak_rss_mb)' "$log" >&2 || true
    if [[ $status -ne 0 ]]; then
        echo "FAIL  $name: libFuzzer exited $status; the input and stack are in $log and .build/fuzz/findings/$name/" >&2
        grep -E '^(==[0-9]+==ERROR|SUMMARY|Fatal error|.*property violated|artifact_prefix|Test unit written)' "$log" \
            | head -20 >&2 || true
    else
        echo "ok    $name" >&2
    fi
    return $status
}

replay() { # name file...: runs the inputs once, with ASan's default allocation stacks
    lookup "$1"
    shift
    local args=()
    mapfile -t args < <(flags)
    mkdir -p "$scratch/findings/$name"
    SWIFT_BACKTRACE=enable=no "$(binary "$executable")" "${args[@]}" -runs=1 "$@"
}

case "${1:-}" in
--list)
    for entry in "${targets[@]}"; do echo "${entry%% *}"; done
    ;;
--build)
    if [[ -n ${2:-} ]]; then
        lookup "$2"
        build "$executable"
    else
        build
    fi
    ;;
--smoke)
    seconds=${2:-3}
    build
    failed=0
    for entry in "${targets[@]}"; do
        run "${entry%% *}" "$seconds" || failed=1
    done
    # Past findings stay fixed: each input of Fuzz/crashes/, named TARGET-what, runs once.
    for file in "$root"/Fuzz/crashes/*; do
        target=""
        for entry in "${targets[@]}"; do
            candidate=${entry%% *}
            if [[ $(basename "$file") == "$candidate"-* && ${#candidate} -gt ${#target} ]]; then target=$candidate; fi
        done
        if [[ -z $target ]]; then
            echo "FAIL  ${file#"$root"/}: the name starts with no target's" >&2
            failed=1
        elif replay "$target" "$file" >"$scratch/logs/replay-$(basename "$file").log" 2>&1; then
            echo "ok    replayed ${file#"$root"/}" >&2
        else
            echo "FAIL  ${file#"$root"/} fails again: see .build/fuzz/logs/replay-$(basename "$file").log" >&2
            failed=1
        fi
    done
    if [[ $failed -ne 0 ]]; then
        echo "== fuzz smoke FAILED" >&2
        exit 1
    fi
    echo "== fuzz smoke passed: every target built and ran ${seconds}s without a finding; past findings replay clean" >&2
    ;;
--replay)
    [[ $# -ge 3 ]] || { echo "usage: scripts/fuzz.sh --replay TARGET FILE..." >&2; exit 64; }
    lookup "$2"
    build "$executable"
    shift
    replay "$@"
    ;;
"" | -h | --help)
    sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'
    [[ -n ${1:-} ]] || exit 64
    ;;
-*)
    echo "error: unknown option $1" >&2
    exit 64
    ;;
*)
    name=$1
    seconds=${2:-60}
    shift $(($# >= 2 ? 2 : 1))
    if [[ ${1:-} == -- ]]; then shift; fi
    lookup "$name"
    build "$executable"
    run "$name" "$seconds" "$@"
    ;;
esac
