#!/usr/bin/env bash
# Runs the whole fault matrix (every upgrade mode × bootloader mode × one or two images; every
# power loss, lost answer and link loss at every request index, and a power loss in the swap)
# and prints one line of counts per cell. `swift test` runs a slice of it (one cell per
# bootloader family).
# Usage, from the repository root: scripts/fault-matrix.sh
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --build-tests
MCUMGR_FAULT_MATRIX=full swift test --skip-build --filter FaultMatrixTests 2>&1 \
    | grep -E "^fault matrix:|recorded an issue|Test run with" \
    | sed -E 's/^✘ Test .* recorded an issue with [0-9]+ arguments? (cell → )?/issue: /'
