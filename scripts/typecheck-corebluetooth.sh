#!/usr/bin/env bash
# Type-checks the Apple-only CoreBluetooth adapters on a machine without CoreBluetooth (Linux).
#
# WHAT THIS PROVES: the `#if canImport(CoreBluetooth)` code in Sources/SMPBLETransport/CoreBluetooth,
# Sources/SMPSimulator/CoreBluetooth and Sources/MCUmgrCommands type-checks in Swift 6 language mode (strict concurrency, the package's
# upcoming features) against scripts/corebluetooth-shim: OUR hand-written declaration shim of
# Apple's CoreBluetooth API. Wrong method names or labels, optionality, types, missing `override`,
# Sendable and isolation mistakes are caught to the extent the shim matches Apple's SDK. A second
# pass (4a) treats the code as built for tvOS, where the peripheral role's initializers do not
# exist: a use of them outside an os() gate fails there. No pass defines SMP_BLUEZ (Package.swift
# defines it on Linux only), so every pass sees the modules as an Apple build does: BlueZ and
# D-Bus left out, and a BlueZ name used outside `#if SMP_BLUEZ` fails.
#
# WHAT IT DOES NOT PROVE: that the code compiles against Apple's real SDK (the shim may differ;
# see its header for the known differences), nor anything about runtime behaviour: nothing is
# linked or run. Only a build on macOS proves the former; only a device the latter.
#
# Usage, from the repository root, after `swift build --target SMPBLETransport --target SMPSimulator`
# (and `--target MCUmgrCommands` for the last part; it is skipped with a note if that module is
# missing):
#     scripts/typecheck-corebluetooth.sh
# Exits non-zero on any error, or when the delegate-method audit differs from the expected list.
set -euo pipefail

root=$(pwd)
modules="$root/.build/debug/Modules"
shim_dir="$root/scripts/corebluetooth-shim"
swiftc=${SWIFTC:-swiftc}

if [[ ! -f "$modules/SMPBLETransport.swiftmodule" || ! -f "$root/.build/debug.yaml" ]]; then
    echo "error: run 'swift build --target SMPBLETransport' in the repository root first" >&2
    exit 2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/cbcheck.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/shim" "$work/modules"

# The C module maps SwiftPM passes for the dependencies (swift-crypto, ZIPFoundation), taken from
# its own build plan so they match this checkout.
xcc_flags() {
    grep -o "\"-module-name\",\"$1\".*" "$root/.build/debug.yaml" | head -1 \
        | grep -o '"-Xcc","[^"]*"' | sed 's/^"-Xcc","\(.*\)"$/-Xcc \1/' | tr '\n' ' '
}
# The package name SwiftPM gives this checkout (it follows the directory name): the command
# modules extend types of the library modules, which is retroactive across packages only.
package_name=$(grep -o '"-module-name","SMPBLETransport".*' "$root/.build/debug.yaml" | head -1 \
    | grep -o '"-package-name","[^"]*"' | head -1 | sed 's/.*,"\(.*\)"$/\1/')
common=(-swift-version 6 -enable-upcoming-feature ExistentialAny -enable-upcoming-feature MemberImportVisibility
    -parse-as-library -DSWIFT_PACKAGE -DDEBUG ${package_name:+-package-name "$package_name"})

failed=0
log="$work/diagnostics.txt"

# Prints errors and warnings (minus the audit's), counts errors; returns non-zero on errors.
report() {
    local label=$1 output=$2
    local errors
    errors=$(grep -cE '^[^ ].*: error:' "$output" || true)
    grep -E '^[^ ].*: (error|warning):' "$output" | grep -v 'deprecated default implementation is used to satisfy' \
        | sed "s|$root/||; s|$work/||" | sort -u || true
    if [[ $errors -gt 0 ]]; then
        echo "FAIL  $label: $errors error(s)"
        failed=1
    else
        echo "ok    $label"
    fi
}

echo "== CoreBluetooth adapters vs. the shim in scripts/corebluetooth-shim (NOT Apple's SDK)"

# 1. The shim as a module named CoreBluetooth. Library evolution makes its C-style enums
#    non-frozen, as imported NS_ENUMs are on Apple platforms (`@unknown default` is enforced).
"$swiftc" -emit-module -enable-library-evolution -suppress-warnings -swift-version 6 -parse-as-library \
    -module-name CoreBluetooth -o "$work/shim/CoreBluetooth.swiftmodule" "$shim_dir"/*.swift >"$log" 2>&1 \
    || { cat "$log"; echo "FAIL  the shim itself does not compile"; exit 1; }
echo "ok    shim module: $(ls "$shim_dir"/*.swift | sed "s|$root/||" | tr '\n' ' ')"

# 2. The whole SMPBLETransport source set with the shim on the import path, so
#    `canImport(CoreBluetooth)` is true and the three adapters are compiled with the rest. Emitting
#    the module also gives step 4 an SMPBLETransport that contains the adapters.
ble_sources=()
while IFS= read -r file; do ble_sources+=("$file"); done < <(find "$root/Sources/SMPBLETransport" -name '*.swift' | sort)
# shellcheck disable=SC2046
"$swiftc" -emit-module -o "$work/modules/SMPBLETransport.swiftmodule" "${common[@]}" \
    -I "$work/shim" -I "$modules" $(xcc_flags SMPBLETransport) -module-name SMPBLETransport \
    "${ble_sources[@]}" >"$log" 2>&1 || true
report "SMPBLETransport with canImport(CoreBluetooth) true (${#ble_sources[@]} files, $(ls "$root"/Sources/SMPBLETransport/CoreBluetooth/*.swift | xargs -n1 basename | tr '\n' ' '))" "$log"
cp "$log" "$work/ble-diagnostics.txt"
# With errors the emitted module is not trustworthy: step 5 then reports a skip, not a verdict.
if grep -qE '^[^ ].*: error:' "$log"; then rm -f "$work/modules/SMPBLETransport.swiftmodule"; fi

# 2b. The simulator, whose CoreBluetooth folder holds the peripheral server (a Mac posing as a
#     device), against the adapter-bearing SMPBLETransport from step 2.
sim_sources=()
while IFS= read -r file; do sim_sources+=("$file"); done < <(find "$root/Sources/SMPSimulator" -name '*.swift' | sort)
if [[ -f "$work/modules/SMPBLETransport.swiftmodule" ]]; then
    # shellcheck disable=SC2046
    "$swiftc" -emit-module -o "$work/modules/SMPSimulator.swiftmodule" "${common[@]}" \
        -I "$work/modules" -I "$work/shim" -I "$modules" $(xcc_flags SMPSimulator) -module-name SMPSimulator \
        "${sim_sources[@]}" >"$log" 2>&1 || true
    report "SMPSimulator with canImport(CoreBluetooth) true (${#sim_sources[@]} files, $(ls "$root"/Sources/SMPSimulator/CoreBluetooth/*.swift | xargs -n1 basename | tr '\n' ' '))" "$log"
    cat "$log" >>"$work/ble-diagnostics.txt"
    if grep -qE '^[^ ].*: error:' "$log"; then rm -f "$work/modules/SMPSimulator.swiftmodule"; fi
else
    echo "FAIL  SMPSimulator: needs step 2 to pass"
    failed=1
fi

# 3. Delegate-method audit. The shim gives every optional delegate method a deprecated no-op
#    default (Linux has no `@objc optional`), so Swift names each optional method a class does NOT
#    implement. A misspelled delegate method (never called on Apple either) shows up here as its
#    correct name. Update EXPECTED when an adapter starts or stops implementing one.
EXPECTED=$(
    cat <<'EOF'
CoreBluetoothCentral.swift CBCentralManagerDelegate centralManager(_:willRestoreState:)
CoreBluetoothCentral.swift CBPeripheralDelegate peripheral(_:didWriteValueFor:error:)
CoreBluetoothCentral.swift CBPeripheralDelegate peripheralDidUpdateName
SimulatedPeripheralServer.swift CBPeripheralManagerDelegate peripheralManager(_:didOpen:error:)
SimulatedPeripheralServer.swift CBPeripheralManagerDelegate peripheralManager(_:didPublishL2CAPChannel:error:)
SimulatedPeripheralServer.swift CBPeripheralManagerDelegate peripheralManager(_:didUnpublishL2CAPChannel:error:)
SimulatedPeripheralServer.swift CBPeripheralManagerDelegate peripheralManager(_:willRestoreState:)
EOF
)
actual=$(grep -E '^[^ ].*: warning: deprecated default implementation is used to satisfy' "$work/ble-diagnostics.txt" \
    | sed -E "s|^.*/([^/:]+\.swift):[0-9]+:[0-9]+: .*instance method '([^']+)' required by protocol '([^']+)'.*$|\1 \3 \2|" \
    | sort -u)
if [[ "$actual" == "$(sort -u <<<"$EXPECTED")" ]]; then
    echo "ok    delegate audit: every implemented delegate method matches a requirement;" \
        "$(wc -l <<<"$actual" | tr -d ' ') optional methods deliberately left to the default"
else
    echo "FAIL  delegate audit: optional delegate methods not implemented differ from the expected list"
    diff <(sort -u <<<"$EXPECTED") <(echo "$actual") | sed 's/^/      /' || true
    failed=1
fi

# 4. The same without `@preconcurrency` on the CoreBluetooth import: shows whether any
#    CoreBluetooth object (modelled non-Sendable) crosses an isolation boundary unchecked.
mkdir -p "$work/no-preconcurrency"
for file in "${ble_sources[@]}"; do
    sed 's/@preconcurrency import CoreBluetooth/import CoreBluetooth/' "$file" >"$work/no-preconcurrency/$(basename "$file")"
done
# shellcheck disable=SC2046
"$swiftc" -typecheck "${common[@]}" -I "$work/shim" -I "$modules" $(xcc_flags SMPBLETransport) \
    -module-name SMPBLETransport "$work"/no-preconcurrency/*.swift >"$log" 2>&1 || true
report "SMPBLETransport again with plain 'import CoreBluetooth' (no @preconcurrency)" "$log"
if [[ -f "$work/modules/SMPBLETransport.swiftmodule" ]]; then
    mkdir -p "$work/no-preconcurrency-sim"
    for file in "${sim_sources[@]}"; do
        sed 's/@preconcurrency import CoreBluetooth/import CoreBluetooth/' "$file" \
            >"$work/no-preconcurrency-sim/$(echo "${file#"$root"/Sources/SMPSimulator/}" | tr / _)"
    done
    # shellcheck disable=SC2046
    "$swiftc" -typecheck "${common[@]}" -I "$work/modules" -I "$work/shim" -I "$modules" $(xcc_flags SMPSimulator) \
        -module-name SMPSimulator "$work"/no-preconcurrency-sim/*.swift >"$log" 2>&1 || true
    report "SMPSimulator again with plain 'import CoreBluetooth' (no @preconcurrency)" "$log"
fi

# 4a. The platforms without a peripheral role (tvOS, watchOS, visionOS): the shim built again with
#     the peripheral role's initializers unavailable, and both modules type-checked with `os(tvOS)`
#     forced true (`-D` cannot set os()), so a use of them outside an `os(...)` gate fails here as it
#     would in a tvOS build. Checked against the same Linux Foundation, not Apple's.
mkdir -p "$work/shim-tvos" "$work/modules-tvos" "$work/ble-tvos" "$work/sim-tvos"
"$swiftc" -emit-module -enable-library-evolution -suppress-warnings -swift-version 6 -parse-as-library \
    -D CB_SHIM_NO_PERIPHERAL_ROLE -module-name CoreBluetooth -o "$work/shim-tvos/CoreBluetooth.swiftmodule" \
    "$shim_dir"/*.swift >"$log" 2>&1 || { cat "$log"; echo "FAIL  the shim without a peripheral role does not compile"; exit 1; }
force_tvos() {  # file, destination: a copy with os(tvOS) true
    sed 's/os(tvOS)/true/g' "$1" >"$2"
}
for file in "${ble_sources[@]}"; do force_tvos "$file" "$work/ble-tvos/$(basename "$file")"; done
# shellcheck disable=SC2046
"$swiftc" -emit-module -o "$work/modules-tvos/SMPBLETransport.swiftmodule" "${common[@]}" \
    -I "$work/shim-tvos" -I "$modules" $(xcc_flags SMPBLETransport) -module-name SMPBLETransport \
    "$work"/ble-tvos/*.swift >"$log" 2>&1 || true
grep -v 'deprecated default implementation is used to satisfy' "$log" >"$log.filtered" || true
report "SMPBLETransport as on tvOS (no peripheral role; os(tvOS) forced)" "$log.filtered"
if [[ -f "$work/modules-tvos/SMPBLETransport.swiftmodule" ]] && ! grep -qE '^[^ ].*: error:' "$log"; then
    for file in "${sim_sources[@]}"; do
        force_tvos "$file" "$work/sim-tvos/$(echo "${file#"$root"/Sources/SMPSimulator/}" | tr / _)"
    done
    # shellcheck disable=SC2046
    "$swiftc" -typecheck "${common[@]}" -I "$work/modules-tvos" -I "$work/shim-tvos" -I "$modules" \
        $(xcc_flags SMPSimulator) -module-name SMPSimulator "$work"/sim-tvos/*.swift >"$log" 2>&1 || true
    grep -v 'deprecated default implementation is used to satisfy' "$log" >"$log.filtered" || true
    report "SMPSimulator as on tvOS (no peripheral role; os(tvOS) forced)" "$log.filtered"
else
    echo "FAIL  SMPSimulator as on tvOS: needs the SMPBLETransport step above to pass"
    failed=1
fi

# 4b. MCUmgrConnect (ble:// to a transport) with the adapter-bearing SMPBLETransport: its
#     `#if canImport(CoreBluetooth)` branch.
if [[ -f "$work/modules/SMPBLETransport.swiftmodule" ]]; then
    connect_sources=("$root"/Sources/MCUmgrConnect/*.swift)
    # shellcheck disable=SC2046
    "$swiftc" -typecheck "${common[@]}" -I "$work/modules" -I "$work/shim" -I "$modules" \
        $(xcc_flags MCUmgrConnect) -module-name MCUmgrConnect "${connect_sources[@]}" >"$log" 2>&1 || true
    report "MCUmgrConnect with canImport(CoreBluetooth) true (${#connect_sources[@]} files)" "$log"
fi

# 5. MCUmgrCommands with the adapter-bearing SMPBLETransport from step 2: the
#    `#if canImport(CoreBluetooth)` parts of CommandContext.swift and SimulatorCommand.swift.
if [[ -f "$modules/MCUmgrCommands.swiftmodule" && -f "$work/modules/SMPBLETransport.swiftmodule" ]]; then
    # The module's files sit in folders by concern; the flat copy below relies on unique names.
    mapfile -t cmd_sources < <(find "$root/Sources/MCUmgrCommands" -name '*.swift' | sort)
    # shellcheck disable=SC2046
    "$swiftc" -typecheck "${common[@]}" -I "$work/modules" -I "$work/shim" -I "$modules" \
        $(xcc_flags MCUmgrCommands) -module-name MCUmgrCommands "${cmd_sources[@]}" >"$log" 2>&1 || true
    report "MCUmgrCommands with canImport(CoreBluetooth) true (${#cmd_sources[@]} files)" "$log"

    # ProfileStore.swift's `#if os(macOS)` branch is not about CoreBluetooth and `-D` cannot set
    # os(macOS): check it by forcing that one condition in a temporary copy. It is checked against
    # Linux Foundation, not Apple's.
    mkdir -p "$work/commands"
    cp "${cmd_sources[@]}" "$work/commands/"
    sed -i 's/^\( *\)#if os(macOS)$/\1#if true  \/\/ forced by typecheck-corebluetooth.sh/' "$work/commands/ProfileStore.swift"
    # shellcheck disable=SC2046
    "$swiftc" -typecheck "${common[@]}" -I "$work/modules" -I "$work/shim" -I "$modules" \
        $(xcc_flags MCUmgrCommands) -module-name MCUmgrCommands "$work"/commands/*.swift >"$log" 2>&1 || true
    report "MCUmgrCommands with ProfileStore.swift's '#if os(macOS)' branch forced on (Linux Foundation)" "$log"
else
    echo "skip  MCUmgrCommands: needs step 2 to pass and 'swift build --target MCUmgrCommands' to have run"
fi

if [[ $failed -ne 0 ]]; then
    echo "== FAILED (against the shim; not a statement about Apple's SDK)"
    exit 1
fi
echo "== passed: the adapters type-check against our CoreBluetooth shim. This is not a build against"
echo "   Apple's SDK and runs nothing; build on macOS and test on hardware for that."
