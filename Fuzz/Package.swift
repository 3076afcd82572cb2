// swift-tools-version: 6.1
// Coverage-guided fuzz targets (libFuzzer) for swift-mcumgr's parsers of untrusted bytes.
//
// A package of its own so the root Package.swift stays as it is: it depends on the root by path
// and builds only with scripts/fuzz.sh, which passes `-sanitize=fuzzer,address` and
// `-parse-as-library` to every Swift module (the library code is instrumented for coverage too).
// Each executable is one target; scripts/fuzz.sh maps the names (`cbor`, `smp-frame`, …) to them.
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

func product(_ name: String) -> Target.Dependency { .product(name: name, package: "swift-mcumgr") }

func fuzzTarget(_ name: String, _ dependencies: [Target.Dependency]) -> Target {
    .executableTarget(
        name: name,
        dependencies: ["FuzzDriver", "FuzzSupport"] + dependencies,
        swiftSettings: swiftSettings
    )
}

let package = Package(
    name: "swift-mcumgr-fuzz",
    platforms: [.macOS(.v13)],
    dependencies: [.package(name: "swift-mcumgr", path: "..")],
    targets: [
        // libFuzzer's driver behind `<Module>_main` (see its header).
        .target(name: "FuzzDriver"),
        // The seeded stream splitter and the property check every target uses.
        .target(name: "FuzzSupport", swiftSettings: swiftSettings),
        fuzzTarget("FuzzCBOR", [product("SMPCBOR")]),
        fuzzTarget("FuzzSMPFrame", [product("SMPCBOR"), product("SMPCore")]),
        fuzzTarget("FuzzConsoleDeframer", [product("SMPCore")]),
        fuzzTarget("FuzzRawDeframer", [product("SMPCore")]),
        fuzzTarget("FuzzBLEReassembly", [product("SMPCore"), product("SMPBLETransport")]),
        fuzzTarget("FuzzMCUbootImage", [product("MCUboot")]),
        fuzzTarget("FuzzDBusMessage", [product("SMPDBus"), product("SMPBytes")]),
        fuzzTarget("FuzzATT", [product("SMPHCI")]),
        fuzzTarget("FuzzHCI", [product("SMPHCI")]),
        // Links Tests/MCUbootTests/Support/ZipBuilder.swift to build zips with valid CRCs.
        fuzzTarget("FuzzPackage", [product("MCUboot")]),
        fuzzTarget("FuzzSimulator", [product("SMPSimulator"), product("SMPCore"), product("SMPCBOR"), product("MCUboot")]),
        // MCUmgrCommands is not a product of the root package: this target compiles the
        // Foundation-only file it fuzzes from it (ProfileStore.swift) through a symbolic link to
        // Sources/MCUmgrCommands/Profiles, so it fuzzes exactly the shipped code.
        fuzzTarget("FuzzURL", [product("MCUmgrConnect"), product("SMPSimulator"), product("MCUboot")]),
    ]
)
