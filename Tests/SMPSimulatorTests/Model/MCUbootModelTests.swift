import Foundation
import MCUboot
import SMPCore
import SMPTestSupport
import Testing

@testable import SMPSimulator

@Suite("MCUbootModel")
struct MCUbootModelTests {
    static func model(_ mode: BootloaderMode, images: Int = 1, key: ImagePublicKey? = nil, noDowngrade: Bool = false)
        -> MCUbootModel
    {
        MCUbootModel(
            mode: mode,
            imageCount: images,
            slotSize: 0x40000,
            factoryImages: (0..<images).map {
                FactoryImage.make(version: ImageVersion(major: 1, minor: 0, revision: 0), image: $0)
            },
            signingKey: key,
            downgradePrevention: noDowngrade
        )
    }

    static func place(_ bytes: [UInt8], in model: inout MCUbootModel, image: Int = 0, slot: Int = 1) {
        model.erase(image: image, slot: slot)
        model.write(image: image, slot: slot, offset: 0, bytes: bytes)
    }

    static func version(_ model: MCUbootModel, image: Int = 0, slot: Int) -> String? {
        model.image(image, slot: slot)?.header.version.description
    }

    // MARK: - Decision table

    struct Row: Sendable, CustomStringConvertible {
        var mode: BootloaderMode
        var primary: SlotTrailer
        var secondary: SlotTrailer
        var expected: SwapType
        var description: String { "\(mode) primary \(primary) secondary \(secondary) → \(expected)" }
    }

    static let good = SlotTrailer(magic: true)
    static let goodOK = SlotTrailer(magic: true, imageOK: true)
    static let tested = SlotTrailer(magic: true, imageOK: false, copyDone: true)
    static let confirmedCopy = SlotTrailer(magic: true, imageOK: true, copyDone: true)

    static let decisionTable: [Row] =
        BootloaderMode.allCases.filter(\.isSwap).flatMap { mode in
            [
                Row(mode: mode, primary: goodOK, secondary: .erased, expected: .none),
                Row(mode: mode, primary: .erased, secondary: .erased, expected: .none),
                Row(mode: mode, primary: goodOK, secondary: good, expected: .test),
                Row(mode: mode, primary: goodOK, secondary: goodOK, expected: .permanent),
                Row(mode: mode, primary: tested, secondary: .erased, expected: .revert),
                Row(mode: mode, primary: confirmedCopy, secondary: .erased, expected: .none),
                // A test request in the secondary wins over a pending revert (rule 2 before rule 4).
                Row(mode: mode, primary: tested, secondary: good, expected: .test),
                Row(
                    mode: mode,
                    primary: goodOK,
                    secondary: tested,
                    expected: mode == .swapUsingOffset ? .revert : .test
                ),
            ]
        } + [
            Row(mode: .overwriteOnly, primary: goodOK, secondary: .erased, expected: .none),
            Row(mode: .overwriteOnly, primary: goodOK, secondary: good, expected: .test),
            Row(mode: .overwriteOnly, primary: goodOK, secondary: goodOK, expected: .permanent),
            Row(mode: .overwriteOnly, primary: tested, secondary: .erased, expected: .none),
        ]

    @Test("MCUboot's swap decision table", arguments: decisionTable)
    func decision(row: Row) {
        var model = Self.model(row.mode)
        model.slots[0][0].trailer = row.primary
        model.slots[0][1].trailer = row.secondary
        #expect(model.swapType(image: 0) == row.expected)
    }

    // MARK: - Lifecycles

    @Test(
        "swap modes: test, reset → new image unconfirmed; reset again without confirm → old image back",
        arguments: BootloaderMode.allCases.filter(\.isSwap)
    )
    func testThenRevert(mode: BootloaderMode) throws {
        var model = Self.model(mode)
        let update = TestImages.image("2.0.0")
        Self.place(update, in: &model)
        try model.setState(
            hash: try MCUbootImage(bytes: update).hash,
            confirm: false,
            allowConfirmNonActive: true
        ).get()
        #expect(model.flags(image: 0, slot: 1) == (pending: true, confirmed: false, active: false, permanent: false))

        model.boot()
        #expect(Self.version(model, slot: 0) == "2.0.0")
        #expect(Self.version(model, slot: 1) == "1.0.0")
        #expect(model.flags(image: 0, slot: 0) == (pending: false, confirmed: false, active: true, permanent: false))
        #expect(model.flags(image: 0, slot: 1) == (pending: false, confirmed: true, active: false, permanent: false))
        #expect(model.swapType(image: 0) == .revert)

        model.boot()
        #expect(Self.version(model, slot: 0) == "1.0.0")
        #expect(model.flags(image: 0, slot: 0) == (pending: false, confirmed: true, active: true, permanent: false))
        #expect(model.swapType(image: 0) == .none)
    }

    @Test("swap modes: test, reset, confirm → the new image stays", arguments: BootloaderMode.allCases.filter(\.isSwap))
    func testThenConfirm(mode: BootloaderMode) throws {
        var model = Self.model(mode)
        let update = TestImages.image("2.0.0")
        Self.place(update, in: &model)
        try model.setState(
            hash: try MCUbootImage(bytes: update).hash,
            confirm: false,
            allowConfirmNonActive: true
        ).get()
        model.boot()
        try model.setState(hash: nil, confirm: true, allowConfirmNonActive: true).get()
        #expect(model.flags(image: 0, slot: 0).confirmed)
        model.boot()
        #expect(Self.version(model, slot: 0) == "2.0.0")
        #expect(model.flags(image: 0, slot: 0) == (pending: false, confirmed: true, active: true, permanent: false))
    }

    @Test(
        "confirm with a hash before reset is a permanent swap",
        arguments: [BootloaderMode.swapUsingMove, .overwriteOnly]
    )
    func permanentSwap(mode: BootloaderMode) throws {
        var model = Self.model(mode)
        let update = TestImages.image("2.0.0")
        Self.place(update, in: &model)
        try model.setState(
            hash: try MCUbootImage(bytes: update).hash,
            confirm: true,
            allowConfirmNonActive: true
        ).get()
        #expect(model.flags(image: 0, slot: 1) == (pending: true, confirmed: false, active: false, permanent: true))
        model.boot()
        model.boot()
        #expect(Self.version(model, slot: 0) == "2.0.0")
        #expect(model.flags(image: 0, slot: 0).confirmed)
    }

    @Test(
        "an image that fails validation is erased and the old one boots",
        arguments: [BootloaderMode.swapUsingScratch, .swapUsingMove, .overwriteOnly]
    )
    func invalidImageIsErased(mode: BootloaderMode) throws {
        var model = Self.model(mode)
        Self.place(TestImages.corrupted("2.0.0"), in: &model)
        // The hash TLV still parses, so the slot shows and can be marked.
        let hash = try #require(model.image(0, slot: 1)?.hash)
        try model.setState(hash: hash, confirm: false, allowConfirmNonActive: true).get()
        model.boot()
        #expect(Self.version(model, slot: 0) == "1.0.0")
        #expect(model.image(0, slot: 1) == nil)
        #expect(model.isRunning)
    }

    @Test("with a signing key, an unsigned image is refused and a signed one accepted")
    func signatureIsChecked() throws {
        let fixtures = Peers.packageRoot.appendingPathComponent("Tests/MCUbootTests/Fixtures")
        let key = try ImagePublicKey(keyFile: Data(contentsOf: fixtures.appendingPathComponent("ecdsa_p256.pub.pem")))
        let signed = try [UInt8](Data(contentsOf: fixtures.appendingPathComponent("ecdsa_p256_protected.bin")))
        var model = Self.model(.swapUsingMove, key: key)
        #expect(!model.isValid(TestImages.image("2.0.0")))
        #expect(model.isValid(signed))
        Self.place(signed, in: &model)
        try model.setState(
            hash: try MCUbootImage(bytes: signed).hash,
            confirm: true,
            allowConfirmNonActive: true
        ).get()
        model.boot()
        #expect(model.image(0, slot: 0)?.hash == (try MCUbootImage(bytes: signed)).hash)
    }

    @Test("overwrite-only with downgrade prevention refuses an older image")
    func downgradePrevention() throws {
        var model = Self.model(.overwriteOnly, noDowngrade: true)
        let older = FactoryImage.make(version: ImageVersion(major: 0, minor: 9, revision: 0), image: 7)
        Self.place(older, in: &model)
        try model.setState(
            hash: try MCUbootImage(bytes: older).hash,
            confirm: false,
            allowConfirmNonActive: true
        ).get()
        model.boot()
        #expect(Self.version(model, slot: 0) == "1.0.0")
        #expect(model.image(0, slot: 1) == nil)
    }

    /// A model whose factory image (slot 0) has `version`.
    static func model(_ mode: BootloaderMode, factory version: ImageVersion, noDowngrade: Bool) -> MCUbootModel {
        MCUbootModel(
            mode: mode,
            imageCount: 1,
            slotSize: 0x40000,
            factoryImages: [FactoryImage.make(version: version)],
            downgradePrevention: noDowngrade
        )
    }

    /// Places an image of `version` in the secondary slot and marks it for test or for good.
    static func request(
        _ version: ImageVersion,
        in model: inout MCUbootModel,
        confirm: Bool
    ) throws -> [UInt8] {
        // Image number 7 gives the payload, and so the hash, its own bytes even at an equal version.
        let update = FactoryImage.make(version: version, image: 7)
        place(update, in: &model)
        try model.setState(
            hash: try MCUbootImage(bytes: update).hash,
            confirm: confirm,
            allowConfirmNonActive: true
        ).get()
        return update
    }

    static let upgradeModes: [BootloaderMode] = [.swapUsingScratch, .swapUsingMove, .swapUsingOffset, .overwriteOnly]

    @Test(
        "downgrade prevention erases an older secondary image at boot; the primary keeps running",
        arguments: upgradeModes,
        [false, true]
    )
    func downgradeIsErased(mode: BootloaderMode, confirm: Bool) throws {
        var model = Self.model(mode, noDowngrade: true)
        _ = try Self.request(ImageVersion(major: 0, minor: 9, revision: 9), in: &model, confirm: confirm)
        model.boot()
        #expect(model.isRunning)
        #expect(model.activeSlots == [0])
        #expect(Self.version(model, slot: 0) == "1.0.0")
        #expect(model.flags(image: 0, slot: 0) == (pending: false, confirmed: true, active: true, permanent: false))
        #expect(model.image(0, slot: 1) == nil)
        #expect(model.slots[0][1] == .erased)
        #expect(model.swapType(image: 0) == .none)
        // Nothing comes back at the following boot either.
        model.boot()
        #expect(Self.version(model, slot: 0) == "1.0.0")
    }

    @Test("without downgrade prevention an older image is installed", arguments: upgradeModes)
    func downgradeWithoutPrevention(mode: BootloaderMode) throws {
        var model = Self.model(mode, noDowngrade: false)
        _ = try Self.request(ImageVersion(major: 0, minor: 9, revision: 9), in: &model, confirm: true)
        model.boot()
        #expect(Self.version(model, slot: 0) == "0.9.9")
    }

    struct EqualVersions: Sendable, CustomStringConvertible {
        var running: ImageVersion
        var update: ImageVersion
        var description: String { "\(running) → \(update)" }
    }

    /// MCUboot compares major.minor.revision only (without `MCUBOOT_VERSION_CMP_USE_BUILD_NUMBER`):
    /// an image that differs only in its build number, even a lower one, is not older.
    static let equalVersions: [EqualVersions] = [
        EqualVersions(
            running: ImageVersion(major: 1, minor: 2, revision: 3),
            update: ImageVersion(major: 1, minor: 2, revision: 3)
        ),
        EqualVersions(
            running: ImageVersion(major: 1, minor: 2, revision: 3, build: 9),
            update: ImageVersion(major: 1, minor: 2, revision: 3, build: 1)
        ),
        EqualVersions(
            running: ImageVersion(major: 1, minor: 2, revision: 3),
            update: ImageVersion(major: 1, minor: 2, revision: 3, build: 4)
        ),
    ]

    @Test(
        "downgrade prevention allows an equal version; a different build number counts as equal",
        arguments: upgradeModes,
        equalVersions
    )
    func equalVersionIsInstalled(mode: BootloaderMode, versions: EqualVersions) throws {
        var model = Self.model(mode, factory: versions.running, noDowngrade: true)
        let update = try Self.request(versions.update, in: &model, confirm: true)
        model.boot()
        #expect(model.image(0, slot: 0)?.hash == (try MCUbootImage(bytes: update)).hash)
        #expect(Self.version(model, slot: 0) == versions.update.description)
    }

    @Test(
        "DirectXIP never erases an older image for downgrade prevention: it boots the higher version",
        arguments: [BootloaderMode.directXIP, .directXIPWithRevert]
    )
    func directXIPKeepsAnOlderImage(mode: BootloaderMode) throws {
        var model = Self.model(mode, noDowngrade: true)
        let older = try Self.request(ImageVersion(major: 0, minor: 9, revision: 0), in: &model, confirm: false)
        for _ in 0..<2 {
            model.boot()
            #expect(model.isRunning)
            #expect(model.activeSlots == [0])
            #expect(Self.version(model, slot: 0) == "1.0.0")
            #expect(model.slots[0][1].data == older)
        }
    }

    @Test("without a bootloader nothing swaps: a pending image stays pending across boots", arguments: [false, true])
    func noBootloaderNeverSwaps(confirm: Bool) throws {
        var model = Self.model(.none)
        let update = try Self.request(ImageVersion(major: 2, minor: 0, revision: 0), in: &model, confirm: confirm)
        let requested = model.flags(image: 0, slot: 1)
        #expect(requested == (pending: true, confirmed: false, active: false, permanent: confirm))
        for _ in 0..<3 {
            model.boot()
            #expect(model.isRunning)
            #expect(model.activeSlots == [0])
            #expect(Self.version(model, slot: 0) == "1.0.0")
            #expect(model.slots[0][1].data == update)
            #expect(model.flags(image: 0, slot: 1) == requested)
            #expect(model.swapType(image: 0) == (confirm ? .permanent : .test))
        }
    }

    @Test("overwrite-only: the update is copied, confirmed, and the secondary slot is emptied")
    func overwrite() throws {
        var model = Self.model(.overwriteOnly)
        let update = TestImages.image("2.0.0")
        Self.place(update, in: &model)
        try model.setState(
            hash: try MCUbootImage(bytes: update).hash,
            confirm: false,
            allowConfirmNonActive: true
        ).get()
        model.boot()
        #expect(Self.version(model, slot: 0) == "2.0.0")
        #expect(model.flags(image: 0, slot: 0).confirmed)
        #expect(model.image(0, slot: 1) == nil)
        model.boot()
        #expect(Self.version(model, slot: 0) == "2.0.0")
    }

    @Test("DirectXIP boots the highest version from its own slot")
    func directXIP() throws {
        var model = Self.model(.directXIP)
        #expect(try model.uploadSlot(image: 0).get() == 1)
        Self.place(TestImages.image("2.0.0"), in: &model)
        #expect(model.flags(image: 0, slot: 1) == (pending: true, confirmed: false, active: false, permanent: true))
        model.boot()
        #expect(model.activeSlots == [1])
        #expect(try model.uploadSlot(image: 0).get() == 0)
        Self.place(TestImages.image("1.5.0"), in: &model, slot: 0)
        model.boot()
        #expect(model.activeSlots == [1])
    }

    @Test("DirectXIP with revert: a tested image that is not confirmed is erased at the next boot")
    func directXIPRevert() throws {
        var model = Self.model(.directXIPWithRevert)
        let update = TestImages.image("2.0.0")
        Self.place(update, in: &model)
        // Without a trailer the new slot is not a candidate.
        #expect(model.directXIPNextSlot(image: 0) == 0)
        try model.setState(
            hash: try MCUbootImage(bytes: update).hash,
            confirm: false,
            allowConfirmNonActive: true
        ).get()
        model.boot()
        #expect(model.activeSlots == [1])
        #expect(!model.flags(image: 0, slot: 1).confirmed)
        model.boot()
        #expect(model.activeSlots == [0])
        #expect(model.image(0, slot: 1) == nil)

        Self.place(update, in: &model)
        try model.setState(
            hash: try MCUbootImage(bytes: update).hash,
            confirm: false,
            allowConfirmNonActive: true
        ).get()
        model.boot()
        model.confirmRunning(image: 0)
        model.boot()
        #expect(model.activeSlots == [1])
        #expect(model.flags(image: 0, slot: 1) == (pending: false, confirmed: true, active: true, permanent: false))
    }

    @Test(
        "single-slot modes: the application cannot overwrite its own slot; what is written there boots",
        arguments: [BootloaderMode.singleSlot, .firmwareLoader]
    )
    func singleSlot(mode: BootloaderMode) throws {
        var model = Self.model(mode)
        #expect(model.slotsPerImage == 1)
        #expect(model.uploadSlot(image: 0) == .failure(.noFreeSlot))
        Self.place(TestImages.image("3.0.0"), in: &model, slot: 0)
        model.boot()
        #expect(Self.version(model, slot: 0) == "3.0.0")
        #expect(model.isRunning)
        Self.place([1, 2, 3], in: &model, slot: 0)
        model.boot()
        #expect(!model.isRunning)
    }

    @Test("a swap interrupted by power loss resumes at the next boot", arguments: [SwapType.test, .permanent])
    func interruptedSwapResumes(type: SwapType) throws {
        var model = Self.model(.swapUsingScratch)
        let update = TestImages.image("2.0.0")
        Self.place(update, in: &model)
        try model.setState(
            hash: try MCUbootImage(bytes: update).hash,
            confirm: type == .permanent,
            allowConfirmNonActive: true
        ).get()
        model.boot(interruptingSwap: 1)
        #expect(!model.isRunning)
        #expect(model.interruptedSwap[0]?.type == type)
        #expect(model.interruptedSwap[0]?.stepsDone == 1)
        model.boot()
        #expect(model.isRunning)
        #expect(Self.version(model, slot: 0) == "2.0.0")
        #expect(model.flags(image: 0, slot: 0).confirmed == (type == .permanent))
    }

    // MARK: - State write refusals

    struct Refusal: Sendable, CustomStringConvertible {
        var name: String
        var hash: [UInt8]?
        var confirm: Bool
        var allow: Bool
        var expected: MCUbootModel.ImageRefusal
        var description: String { name }
    }

    static let factoryHash = Array(
        TestImages.hash(FactoryImage.make(version: ImageVersion(major: 1, minor: 0, revision: 0)))
    )
    static let updateHash = Array(TestImages.hash(TestImages.image("2.0.0")))

    static let refusals: [Refusal] = [
        Refusal(name: "test without a hash", hash: nil, confirm: false, allow: true, expected: .invalidHash),
        Refusal(
            name: "a 31-byte hash",
            hash: Array(repeating: 1, count: 31),
            confirm: false,
            allow: true,
            expected: .invalidHash
        ),
        Refusal(
            name: "an unknown hash",
            hash: Array(repeating: 7, count: 32),
            confirm: false,
            allow: true,
            expected: .hashNotFound
        ),
        Refusal(
            name: "testing the running image",
            hash: factoryHash,
            confirm: false,
            allow: true,
            expected: .testToActiveDenied
        ),
        Refusal(
            name: "confirming another slot when not allowed",
            hash: updateHash,
            confirm: true,
            allow: false,
            expected: .imageConfirmationDenied
        ),
    ]

    @Test("state write refusals", arguments: refusals)
    func refusal(_ refusal: Refusal) {
        var model = Self.model(.swapUsingMove)
        Self.place(TestImages.image("2.0.0"), in: &model)
        let result = model.setState(hash: refusal.hash, confirm: refusal.confirm, allowConfirmNonActive: refusal.allow)
        #expect(throws: refusal.expected) { try result.get() }
    }

    @Test("a slot confirmed for the next boot cannot be switched back to test; confirming again is a no-op")
    func permanentIsFinal() throws {
        var model = Self.model(.swapUsingMove)
        Self.place(TestImages.image("2.0.0"), in: &model)
        try model.setState(hash: Self.updateHash, confirm: true, allowConfirmNonActive: true).get()
        #expect(throws: MCUbootModel.ImageRefusal.imageAlreadyPending) {
            try model.setState(hash: Self.updateHash, confirm: false, allowConfirmNonActive: true).get()
        }
        try model.setState(hash: Self.updateHash, confirm: true, allowConfirmNonActive: true).get()
        // Re-testing a slot already marked for test is a no-op too.
        var other = Self.model(.swapUsingMove)
        Self.place(TestImages.image("2.0.0"), in: &other)
        try other.setState(hash: Self.updateHash, confirm: false, allowConfirmNonActive: true).get()
        try other.setState(hash: Self.updateHash, confirm: false, allowConfirmNonActive: true).get()
        #expect(other.swapType(image: 0) == .test)
    }

    @Test("the secondary slot is in use while pending or holding the revert image")
    func slotInUse() throws {
        var model = Self.model(.swapUsingMove)
        #expect(try model.uploadSlot(image: 0).get() == 1)
        Self.place(TestImages.image("2.0.0"), in: &model)
        try model.setState(hash: Self.updateHash, confirm: false, allowConfirmNonActive: true).get()
        #expect(throws: MCUbootModel.ImageRefusal.noFreeSlot) { try model.uploadSlot(image: 0).get() }
        model.boot()
        #expect(throws: MCUbootModel.ImageRefusal.noFreeSlot) { try model.uploadSlot(image: 0).get() }
        model.confirmRunning(image: 0)
        #expect(try model.uploadSlot(image: 0).get() == 1)
        #expect(throws: MCUbootModel.ImageRefusal.invalidSlot) { try model.uploadSlot(image: 5).get() }
    }

    @Test("state list: image numbers only with several images, every flag explicit")
    func stateList() {
        let single = Self.model(.swapUsingMove).stateList()
        #expect(single.count == 1)
        #expect(single[0].image == nil)
        #expect(single[0].pending == false && single[0].permanent == false && single[0].bootable == true)
        let dual = Self.model(.swapUsingMove, images: 2).stateList()
        #expect(dual.map(\.image) == [0, 1])
        #expect(Set(dual.compactMap(\.hash)).count == 2)
    }

    @Test("the factory image is a valid MCUboot image with the configured version")
    func factoryImage() throws {
        let bytes = FactoryImage.make(version: ImageVersion(major: 4, minor: 5, revision: 6, build: 7))
        let image = try MCUbootImage(bytes: bytes)
        #expect(image.header.version.description == "4.5.6.7")
        #expect(image.verify().isHashValid)
    }
}

extension SlotTrailer: CustomStringConvertible {
    public var description: String {
        "[magic \(magic ? 1 : 0) ok \(imageOK ? 1 : 0) copy \(copyDone ? 1 : 0)]"
    }
}
