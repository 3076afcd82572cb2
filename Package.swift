// swift-tools-version: 6.1
import PackageDescription

/// Settings shared by every target: Swift 6 language mode comes from the tools version; these
/// upcoming features keep `any` explicit and imports honest, as swift-log does.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    // BlueZ and our D-Bus exist where bluetoothd does: Linux. Elsewhere that code is not compiled
    // (Apple platforms have CoreBluetooth), and `scripts/typecheck-corebluetooth.sh` checks the
    // modules without it, as an Apple build sees them.
    .define("SMP_BLUEZ", .when(platforms: [.linux])),
]

/// A dependency on one of our targets for Linux only: BlueZ's D-Bus and its sockets.
func onLinux(_ target: String) -> Target.Dependency { .target(name: target, condition: .when(platforms: [.linux])) }

let package = Package(
    name: "swift-mcumgr",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .library(name: "SMPBytes", targets: ["SMPBytes"]),
        .library(name: "SMPCBOR", targets: ["SMPCBOR"]),
        .library(name: "SMPCore", targets: ["SMPCore"]),
        .library(name: "MCUboot", targets: ["MCUboot"]),
        .library(name: "SMPLink", targets: ["SMPLink"]),
        .library(name: "MCUmgr", targets: ["MCUmgr"]),
        .library(name: "MCUmgrDFU", targets: ["MCUmgrDFU"]),
        .library(name: "SMPUDPTransport", targets: ["SMPUDPTransport"]),
        .library(name: "SMPSerialTransport", targets: ["SMPSerialTransport"]),
        .library(name: "SMPSimulator", targets: ["SMPSimulator"]),
        .library(name: "SMPBLETransport", targets: ["SMPBLETransport"]),
        .library(name: "SMPDBus", targets: ["SMPDBus"]),
        .library(name: "SMPHCI", targets: ["SMPHCI"]),
        .library(name: "SMPHCIHost", targets: ["SMPHCIHost"]),
        .library(name: "MCUmgrConnect", targets: ["MCUmgrConnect"]),
        .library(name: "MCUmgrFleet", targets: ["MCUmgrFleet"]),
        .library(name: "MCUmgrFleetPostgres", targets: ["MCUmgrFleetPostgres"]),
        // One product for an app: re-exports the client, the engine, images and connection URLs.
        .library(name: "MCUmgrKit", targets: ["MCUmgrKit"]),
        .executable(name: "mcumgr", targets: ["MCUmgrCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/weichsel/ZIPFoundation", from: "0.9.20"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        // Fleet state: SQLite with its amalgamation vendored (no libsqlite3-dev needed), and
        // PostgreSQL for a rollout shared by several hosts.
        .package(url: "https://github.com/vapor/sqlite-nio", from: "1.13.2"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        // `mcumgr ui`: the HTTP server of the device manager in a browser.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        // Hummingbird's own vocabulary (statuses, header names, buffers), imported by name.
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.80.0"),
        // Only for `swift package generate-documentation` (scripts/docs.sh); links into no target.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // Pure layers: no I/O anywhere below MCUmgrCommands.
        .target(name: "SMPBytes", swiftSettings: swiftSettings),
        .target(name: "SMPCBOR", dependencies: ["SMPBytes"], swiftSettings: swiftSettings),
        .target(name: "SMPCore", dependencies: ["SMPBytes", "SMPCBOR"], swiftSettings: swiftSettings),
        .target(
            name: "MCUboot",
            dependencies: [
                "SMPBytes",
                "SMPCBOR",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "ZIPFoundation", package: "ZIPFoundation"),
            ],
            swiftSettings: swiftSettings
        ),
        // What a transport is: the connection protocols and the link error. Transports depend on
        // this, not on the client.
        .target(name: "SMPLink", dependencies: ["SMPCore"], swiftSettings: swiftSettings),
        // A Bluetooth LE host over HCI, pure: packets, H4 framing, advertising data and the
        // controller's bring-up as state machines; the I/O that drives them lives elsewhere.
        .target(name: "SMPHCI", dependencies: ["SMPBytes"], swiftSettings: swiftSettings),
        // The client and the transfer engine: no image parsing, no archives, no cryptography.
        .target(
            name: "MCUmgr",
            dependencies: [
                "SMPBytes", "SMPCBOR", "SMPCore", "SMPLink",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The firmware-upgrade engine: the client plus MCUboot images and packages; it reads a
        // package's file (SMPPOSIX's whole-file reads), as MCUboot only parses bytes.
        .target(
            name: "MCUmgrDFU",
            dependencies: [
                "SMPCore", "SMPLink", "MCUmgr", "MCUboot", "SMPPOSIX",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        // Thin POSIX I/O shared by the UDP and serial transports and the simulator's servers:
        // sockets, termios serial ports, pseudo-terminals, the blocking read loop (package only).
        // SMPBytes for `Locked`, the package's one lock.
        .target(name: "SMPPOSIX", dependencies: ["SMPBytes"], swiftSettings: swiftSettings),
        // Our LE host's I/O edge: a controller over a socket or UART, the SMPHCI machines driven.
        .target(
            name: "SMPHCIHost",
            dependencies: [
                "SMPHCI", "SMPBytes", "SMPLink", "SMPPOSIX", .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "SMPUDPTransport",
            dependencies: ["SMPLink", "SMPCore", "SMPPOSIX", .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "SMPSerialTransport",
            dependencies: ["SMPLink", "SMPCore", "SMPPOSIX", .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings
        ),
        // D-Bus: the wire format (pure, fuzzed), SASL authentication and a small connection over a
        // Unix socket with descriptor passing. Our own, so no system library or -dev package.
        .target(name: "SMPDBus", dependencies: ["SMPBytes", "SMPPOSIX"], swiftSettings: swiftSettings),
        // Bluetooth LE: the GATT transport core over any link, the BlueZ central (D-Bus; Linux only) and the
        // CoreBluetooth adapters behind `#if canImport(CoreBluetooth)`. The simulated radio link
        // lives with the simulator.
        .target(
            name: "SMPBLETransport",
            dependencies: [
                "SMPLink", "SMPCore", "SMPHCI", "SMPHCIHost", onLinux("SMPDBus"), onLinux("SMPPOSIX"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // Connection URLs (`udp://`, `serial://`, `ble://`) and the transports they name, for apps
        // and fleet inventories without the command line; `sim://` is served where the simulator is.
        .target(
            name: "MCUmgrConnect",
            dependencies: [
                "SMPLink", "SMPUDPTransport", "SMPSerialTransport", "SMPBLETransport", "SMPHCIHost",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // Fleet upgrades: the rollout state machine (pure), the driver running many upgrades, and
        // the store that keeps a rollout's state on one host (SQLite).
        .target(
            name: "MCUmgrFleet",
            dependencies: [
                "SMPCore", "SMPLink", "MCUmgr", "MCUmgrDFU", "MCUboot", "MCUmgrConnect", "SMPHCIHost",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SQLiteNIO", package: "sqlite-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // A rollout shared by workers on several hosts, kept in PostgreSQL: its own module, so
        // PostgresNIO and NIOSSL come only to those who share rollouts.
        .target(
            name: "MCUmgrFleetPostgres",
            dependencies: [
                "MCUmgrFleet", "MCUmgrDFU", "MCUmgrConnect", "SMPBytes",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // Every simulation: the device, its servers, the simulated BLE link and peripheral. Not the
        // client, the upgrade engine or a transport: a device needs none of them.
        .target(
            name: "SMPSimulator",
            dependencies: [
                "SMPBytes", "SMPCBOR", "SMPCore", "SMPLink", "MCUboot", "SMPPOSIX", "SMPHCI", "SMPHCIHost",
                onLinux("SMPDBus"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // One import for an app: `@_exported` imports only, no code of its own.
        .target(
            name: "MCUmgrKit",
            dependencies: [
                "MCUboot", "MCUmgr", "MCUmgrConnect", "MCUmgrDFU", "SMPCore", "SMPLink", "SMPBLETransport",
                "SMPSerialTransport", "SMPUDPTransport",
            ],
            swiftSettings: swiftSettings
        ),
        // `mcumgr ui`: the device manager in a browser. The server, its JSON and live-update API,
        // and the page's assets built into the binary. Connections come from its caller (which
        // serves `sim://`); the Simulator screen runs `SMPSimulator`'s devices over UDP itself.
        .target(
            name: "MCUmgrWeb",
            dependencies: [
                "SMPBytes", "SMPCBOR", "SMPCore", "SMPLink", "MCUboot", "MCUmgr", "MCUmgrDFU", "MCUmgrConnect",
                "MCUmgrFleet", "SMPSimulator",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            resources: [
                .embedInCode("Assets/index.html"),
                .embedInCode("Assets/app.css"),
                .embedInCode("Assets/app.js"),
            ],
            swiftSettings: swiftSettings
        ),
        // The command tree is a library so tests can run it in-process.
        .target(
            name: "MCUmgrCommands",
            dependencies: [
                "SMPCBOR", "SMPCore", "SMPLink", "MCUboot", "MCUmgr", "MCUmgrDFU", "MCUmgrConnect", "MCUmgrFleet",
                "MCUmgrFleetPostgres", "MCUmgrWeb", "SMPUDPTransport",
                "SMPSerialTransport", "SMPSimulator", "SMPBLETransport", "SMPHCI", "SMPHCIHost",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The executable target is not called `mcumgr`: on case-insensitive file systems that
        // collides with a future `MCUmgr` module. Only the product carries the name.
        .executableTarget(name: "MCUmgrCLI", dependencies: ["MCUmgrCommands"], swiftSettings: swiftSettings),
        .executableTarget(
            name: "SMPBenchmarks",
            dependencies: ["SMPCBOR", "SMPCore"],
            path: "Benchmarks/SMPBenchmarks",
            swiftSettings: swiftSettings
        ),

        .executableTarget(
            name: "TransferBenchmarks",
            dependencies: [
                "MCUmgr", "MCUmgrDFU", "SMPCore", "SMPLink", "SMPSimulator", "SMPUDPTransport", "SMPSerialTransport",
                "SMPPOSIX",
            ],
            path: "Benchmarks/TransferBenchmarks",
            swiftSettings: swiftSettings
        ),

        // Test support shared by the test targets: locating the Python peers, hex helpers.
        .target(
            name: "SMPTestSupport",
            dependencies: ["SMPDBus", "SMPCore", "SMPLink"],
            path: "Tests/SMPTestSupport",
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "SMPBytesTests", dependencies: ["SMPBytes"], swiftSettings: swiftSettings),
        .testTarget(name: "SMPCBORTests", dependencies: ["SMPCBOR", "SMPTestSupport"], swiftSettings: swiftSettings),
        .testTarget(
            name: "SMPCoreTests",
            dependencies: ["SMPCore", "SMPCBOR", "SMPTestSupport"],
            resources: [.copy("Fixtures")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "MCUbootTests",
            dependencies: ["MCUboot", "SMPTestSupport"],
            resources: [.copy("Fixtures")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "MCUmgrTests",
            dependencies: ["MCUmgr", "MCUmgrDFU", "SMPLink", "MCUboot", "SMPSimulator", "SMPCore", "SMPTestSupport"],
            swiftSettings: swiftSettings
        ),
        // The upgrade engine's tests: planners, the state machine, the engine against the
        // simulator (the loopback matrix, the fault matrix and soak) and the tutorial's program.
        .testTarget(
            name: "MCUmgrDFUTests",
            dependencies: [
                "MCUmgrKit", "MCUmgrDFU", "MCUmgr", "SMPLink", "MCUboot", "SMPSimulator", "SMPCore", "SMPTestSupport",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "MCUmgrConnectTests",
            dependencies: ["MCUmgrConnect", "SMPLink", "SMPUDPTransport", "SMPSerialTransport", "SMPHCIHost"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "MCUmgrFleetTests",
            dependencies: [
                "MCUmgrFleet", "MCUmgrFleetPostgres", "MCUmgrDFU", "MCUmgrConnect", "MCUmgr", "MCUboot", "SMPCore",
                "SMPLink", "SMPSimulator", "SMPTestSupport",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SMPHCITests",
            dependencies: ["SMPHCI", "SMPBytes"],
            exclude: ["vectors"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SMPHCIHostTests",
            dependencies: ["SMPHCIHost", "SMPHCI", "SMPBytes", "SMPLink", "SMPPOSIX", "SMPTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "SMPPOSIXTests", dependencies: ["SMPPOSIX", "SMPTestSupport"], swiftSettings: swiftSettings),
        .testTarget(
            name: "SMPTransportTests",
            dependencies: [
                "SMPUDPTransport", "SMPSerialTransport", "SMPSimulator", "SMPPOSIX", "SMPLink", "MCUmgr", "MCUmgrDFU",
                "SMPTestSupport",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SMPSimulatorTests",
            dependencies: [
                "SMPSimulator", "SMPLink", "MCUmgr", "MCUmgrDFU", "SMPCore", "MCUboot", "SMPPOSIX", "SMPTestSupport",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SMPDBusTests",
            dependencies: ["SMPDBus", "SMPBytes", "SMPTestSupport"],
            resources: [.copy("Fixtures")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SMPBLETransportTests",
            dependencies: [
                "SMPBLETransport", "SMPSimulator", "SMPLink", "MCUmgr", "MCUmgrDFU", "SMPCore", "MCUboot",
                "MCUmgrCommands", "SMPDBus", "SMPPOSIX", "SMPTestSupport", "SMPHCI", "SMPHCIHost",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "MCUmgrCommandsTests",
            // Every module the tests import, so a change in any of them rebuilds the tests.
            dependencies: [
                "MCUmgrCommands", "MCUmgrDFU", "MCUmgr", "MCUboot", "SMPBytes", "SMPCore", "SMPPOSIX",
                "SMPSerialTransport", "MCUmgrFleet", "MCUmgrConnect", "MCUmgrWeb", "SMPLink",
                "SMPSimulator", "SMPUDPTransport", "SMPTestSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "MCUmgrWebTests",
            dependencies: [
                "MCUmgrWeb", "MCUmgr", "MCUmgrDFU", "MCUmgrConnect", "MCUmgrFleet", "MCUboot", "SMPCore", "SMPLink",
                "SMPSimulator", "SMPTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
