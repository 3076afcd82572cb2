#!/usr/bin/env bash
# The random soak as a benchmark: ROUNDS seeded upgrades (default 1,000) under mixed faults, every
# bootloader mode, eight at a time, against the simulated device. Prints the counts and the time;
# `swift test` runs the first 200 of the same rounds. Timing is recorded in docs/BENCHMARKS.md,
# never asserted.
# Usage, from the repository root: scripts/soak.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --build-tests
MCUMGR_SOAK_ROUNDS=${1:-1000} swift test --skip-build --filter soakOfUpgradesUnderMixedFaults 2>&1 \
    | grep -E "^soak:|recorded an issue|Test run with"
