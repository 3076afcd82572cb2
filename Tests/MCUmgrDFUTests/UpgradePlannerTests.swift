import Foundation
import MCUboot
import MCUmgr
import MCUmgrDFU
import SMPCore
import Testing

@Suite struct UpgradePlannerTests {
    static let envelope = FirmwarePackage.Image(
        imageIndex: 0,
        slot: 0,
        fileName: "root.suit",
        content: .suitEnvelope,
        data: Data([1, 2, 3]),
        hash: Slots.hash(Slots.b)
    )
    static let cache = FirmwarePackage.Image(
        imageIndex: 1,
        slot: 0,
        fileName: "cache.bin",
        content: .suitCache,
        data: Data([4]),
        hash: []
    )

    static func context() -> PlanningContext {
        PlanningContext(slots: [], bootloaderMode: nil, noDowngrade: false, configuration: .init())
    }

    @Test func plansASUITPackage() throws {
        #expect(
            try SUITPlanner(images: [Self.envelope]).plan(Self.context()).steps == [
                .suitUploadEnvelope(packageIndex: 0, deferInstall: false), .suitInstall(digest: Slots.hash(Slots.b)),
            ]
        )
        #expect(
            try SUITPlanner(images: [Self.envelope, Self.cache]).plan(Self.context()).steps == [
                .suitUploadEnvelope(packageIndex: 0, deferInstall: true), .suitUploadCache(packageIndex: 1),
                .suitProcess,
                .suitInstall(digest: Slots.hash(Slots.b)),
            ]
        )
        #expect(throws: PlanningFailure.self) { try SUITPlanner(images: [Self.cache]).plan(Self.context()) }
    }

    @Test func eachPayloadHasItsPlanner() {
        #expect(UpgradePayload.mcuboot([Slots.image(Slots.b)]).planner.needsImageList)
        #expect(!UpgradePayload.suit(images: [Self.envelope], resources: [:]).planner.needsImageList)
    }

    /// The device asks for `file://NAME`; names compare without case, by full name then file name.
    @Test(arguments: [
        ("file://app.bin", true), ("APP.BIN", true), ("file://net.bin", true), ("file://other.bin", false),
    ])
    func resourcesAreFoundByName(_ uri: String, _ found: Bool) {
        let payload = UpgradePayload.suit(
            images: [Self.envelope],
            resources: ["app.bin": Data([1]), "images/net.bin": Data([2])]
        )
        #expect((payload.resource(uri) != nil) == found)
        #expect(UpgradePayload.mcuboot([]).resource(uri) == nil)
    }
}
