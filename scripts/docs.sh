#!/usr/bin/env bash
# Builds the DocC documentation of every library product's module with warnings as errors: an
# unresolved symbol link, a documented parameter that does not exist, a tutorial step whose code
# file is missing — any warning fails the run. Every library module must have a
# Sources/<Module>/Documentation.docc catalog (its landing page), so a new product cannot ship
# without one.
#
# Usage, from anywhere in the repository:
#     scripts/docs.sh              # one archive per module, in .build/plugins/Swift-DocC/outputs/
#     scripts/docs.sh --combined   # the same checks, then one archive of all modules to browse
#
# Links between modules are written in code voice (`SMPClient`), not as symbol links: a per-module
# build cannot resolve them, and the per-module build is the one checked here.
set -euo pipefail
cd "$(dirname "$0")/.."

combined=()
case "${1:-}" in
    "") ;;
    --combined) combined=(--enable-experimental-combined-documentation) ;;
    *)
        echo "usage: scripts/docs.sh [--combined]" >&2
        exit 64
        ;;
esac

# The library products' modules, read from the manifest so that the list cannot go stale.
modules=$(swift package describe --type json | python3 -c '
import json, sys
package = json.load(sys.stdin)
modules = sorted({t for p in package["products"] if "library" in p["type"] for t in p["targets"]})
print("\n".join(modules))
')

targets=()
missing=()
for module in $modules; do
    targets+=(--target "$module")
    [[ -d "Sources/$module/Documentation.docc" ]] || missing+=("$module")
done
if ((${#missing[@]})); then
    echo "error: no Sources/<Module>/Documentation.docc catalog for: ${missing[*]}" >&2
    exit 1
fi

echo "== DocC, warnings as errors: $(echo $modules | wc -w) modules =="
swift package generate-documentation "${targets[@]}" --warnings-as-errors "${combined[@]}"
