// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "FirstUpgrade",
    platforms: [.macOS(.v13)],
    dependencies: [
        // The clone, two folders up: found by path whatever its folder is called.
        .package(name: "swift-mcumgr", path: "../..")
    ],
    targets: [
        .executableTarget(
            name: "FirstUpgrade",
            dependencies: [
                .product(name: "MCUmgrKit", package: "swift-mcumgr"),
                .product(name: "SMPSimulator", package: "swift-mcumgr"),
            ]
        )
    ]
)
