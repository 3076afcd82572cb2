#!/usr/bin/env bash
# Runs the whole fault matrix (every upgrade mode × bootloader mode × one or two images; every
# power loss, lost answer and link loss at every request index, and a power loss in the swap)
# and prints one line of counts per cell. `swift test` runs a slice of it (one cell per
# bootloader family).
# Usage, from the repository root: scripts/fault-matrix.sh ["CELL"]
# With a cell's description as the counts line prints it (e.g. "confirm-only on firmware-loader,
# 1 image(s)"), only that cell runs, with a line per run: its fault and how it ended. With
# MCUMGR_FAULT_MATRIX_RUNS=1 every cell prints those lines, named by cell, in the order of the
# faults: two runs of the whole matrix then compare with diff.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --build-tests
MCUMGR_FAULT_MATRIX=full MCUMGR_FAULT_MATRIX_ONLY=${1:-} swift test --skip-build --filter FaultMatrixTests 2>&1 \
    | grep -E "^fault matrix( run)?:|recorded an issue|Test run with" \
    | sed -E 's/^✘ Test .* recorded an issue with [0-9]+ arguments? (cell → )?/issue: /'
