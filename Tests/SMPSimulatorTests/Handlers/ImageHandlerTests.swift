import Foundation
import MCUboot
import SMPCBOR
import SMPCore
import SMPLink
import SMPTestSupport
import Testing

@testable import SMPSimulator

@Suite("ImageHandler")
struct ImageHandlerTests {
    @Test("state read: one valid confirmed active image in slot 0, every flag written, splitStatus 0")
    func initialState() async throws {
        var client = try await TestClient()
        let payload = try await client.payload(ImageManagement.StateRead())
        let entry = try #require(payload["images"]?.arrayValue?.first?.mapValue)
        #expect(
            entry.entries.map(\.key) == [
                "slot", "version", "hash", "bootable", "pending", "confirmed", "active", "permanent",
            ]
        )
        #expect(payload["splitStatus"] == 0)
        let state = try await client.send(ImageManagement.StateRead())
        #expect(state.images.count == 1)
        #expect(state.images[0].version == "1.0.0")
        #expect(state.images[0].isActive && state.images[0].isConfirmed && state.images[0].isBootable)
    }

    @Test("upload, test, reset, confirm; and the revert path: test, reset, reset again → old image back")
    func lifecycle() async throws {
        var client = try await TestClient()
        let image = TestImages.image("2.0.0")
        #expect(try await client.upload(image, chunk: 300) == true)
        var states = try await client.send(ImageManagement.StateRead()).images
        #expect(states.map(\.version) == ["1.0.0", "2.0.0"])
        states = try await client.send(ImageManagement.StateWrite(hash: TestImages.hash(image), confirm: false)).images
        #expect(states[1].isPending && !states[1].isPermanent)
        _ = try await client.send(OSManagement.Reset())
        await client.device.waitUntilAnswering()
        states = try await client.send(ImageManagement.StateRead()).images
        #expect(states[0].version == "2.0.0" && states[0].isActive && !states[0].isConfirmed)
        #expect(states[1].version == "1.0.0" && states[1].isConfirmed)
        _ = try await client.send(OSManagement.Reset())
        await client.device.waitUntilAnswering()
        states = try await client.send(ImageManagement.StateRead()).images
        #expect(states[0].version == "1.0.0" && states[0].isActive && states[0].isConfirmed)

        // Test again and confirm this time.
        _ = try await client.send(ImageManagement.StateWrite(hash: TestImages.hash(image), confirm: false))
        _ = try await client.send(OSManagement.Reset())
        await client.device.waitUntilAnswering()
        states = try await client.send(ImageManagement.StateWrite(confirm: true)).images
        #expect(states[0].version == "2.0.0" && states[0].isConfirmed)
        _ = try await client.send(OSManagement.Reset())
        await client.device.waitUntilAnswering()
        #expect(try await client.send(ImageManagement.StateRead()).images[0].version == "2.0.0")
    }

    @Test("multi-image: upload to image 1 and test it")
    func multiImage() async throws {
        var client = try await TestClient(configuration: .init(imageCount: 2))
        let image = TestImages.image("3.0.0", image: 1)
        #expect(try await client.upload(image, image: 1) == true)
        let states = try await client.send(ImageManagement.StateWrite(hash: TestImages.hash(image), confirm: false))
            .images
        #expect(states.contains { $0.image == 1 && $0.slot == 1 && $0.isPending })
        _ = try await client.send(OSManagement.Reset())
        await client.device.waitUntilAnswering()
        let after = try await client.send(ImageManagement.StateRead()).images
        #expect(after.contains { $0.image == 1 && $0.slot == 0 && $0.version == "3.0.0" && $0.isActive })
        #expect(after.contains { $0.image == 0 && $0.slot == 0 && $0.version == "1.0.0" && $0.isActive })
    }

    @Test("upload resumes when the same sha restarts, and answers the expected offset to a wrong one")
    func resumeAndWrongOffset() async throws {
        var client = try await TestClient()
        let image = TestImages.image("2.0.0")
        let sha = Data(ImageHashAlgorithm.sha256.hash(image))
        let start = ImageManagement.Upload(
            offset: 0,
            data: Data(image.prefix(400)),
            length: UInt64(image.count),
            sha256: sha
        )
        #expect(try await client.send(start).offset == 400)
        #expect(try await client.send(ImageManagement.Upload(offset: 900, data: Data(image[900..<1000]))).offset == 400)
        #expect(try await client.send(ImageManagement.Upload(offset: 400, data: Data(image[400..<800]))).offset == 800)
        // Restart with the same sha: not written again, continue from 800.
        #expect(try await client.send(start).offset == 800)
        let last = try await client.send(ImageManagement.Upload(offset: 800, data: Data(image[800...])))
        #expect(last.offset == UInt64(image.count))
        #expect(last.match == true)
    }

    @Test("a wrong sha reports match false")
    func mismatch() async throws {
        var client = try await TestClient()
        let image = TestImages.image("2.0.0")
        let upload = ImageManagement.Upload(
            offset: 0,
            data: Data(image),
            length: UInt64(image.count),
            sha256: Data(repeating: 3, count: 32)
        )
        #expect(try await client.send(upload).match == false)
    }

    @Test("a corrupted flash write: every offset is confirmed, match is false, one bit differs; once")
    func corruptedFlashWrite() async throws {
        var client = try await TestClient()
        await client.device.inject(.corruptFlash(atOffset: 1000))
        let image = TestImages.image("2.0.0")
        #expect(try await client.upload(image) == false)
        let stored = await client.device.bootloader.slots[0][1].data.prefix(image.count)
        let differing = zip(stored, image).enumerated().filter { $0.element.0 != $0.element.1 }.map(\.offset)
        #expect(differing == [1000])
        // The fault is used up: the same upload again is stored intact.
        #expect(try await client.upload(image) == true)
    }

    struct UploadError: Sendable, CustomStringConvertible {
        var name: String
        var request: CBOR
        var v2: Int?
        var v1: Int
        var description: String { name }
    }

    static let header = Data(TestImages.image("2.0.0").prefix(64))

    static let uploadErrorCases: [UploadError] = [
        UploadError(name: "no off", request: ["data": .byteString(header), "len": 100], v2: 20, v1: 3),
        UploadError(name: "no len", request: ["off": 0, "data": .byteString(header)], v2: 21, v1: 3),
        UploadError(
            name: "short header",
            request: ["off": 0, "len": 100, "data": .byteString(Data([1, 2]))],
            v2: 22,
            v1: 3
        ),
        UploadError(
            name: "bad magic",
            request: ["off": 0, "len": 100, "data": .byteString(Data(repeating: 0, count: 40))],
            v2: 23,
            v1: 1
        ),
        UploadError(
            name: "long sha",
            request: [
                "off": 0, "len": 100, "data": .byteString(header), "sha": .byteString(Data(repeating: 0, count: 33)),
            ],
            v2: 24,
            v1: 3
        ),
        UploadError(
            name: "too large",
            request: ["off": 0, "len": 0x50000, "data": .byteString(header)],
            v2: 30,
            v1: 1
        ),
        UploadError(
            name: "off as text",
            request: ["off": "0", "len": 100, "data": .byteString(header)],
            v2: nil,
            v1: 3
        ),
        UploadError(name: "data as text", request: ["off": 0, "len": 100, "data": "abc"], v2: nil, v1: 3),
        UploadError(name: "len negative", request: ["off": 0, "len": -1, "data": .byteString(header)], v2: nil, v1: 3),
        UploadError(
            name: "upgrade as int",
            request: ["off": 0, "len": 100, "data": .byteString(header), "upgrade": 1],
            v2: nil,
            v1: 3
        ),
        UploadError(
            name: "image as text",
            request: ["off": 0, "len": 100, "data": .byteString(header), "image": "0"],
            v2: nil,
            v1: 3
        ),
        UploadError(
            name: "not newer",
            request: [
                "off": 0, "len": 100, "data": .byteString(Data(TestImages.image("1.0.0").prefix(64))), "upgrade": true,
            ],
            v2: 27,
            v1: 6
        ),
    ]

    @Test("upload refusals in both protocol versions", arguments: uploadErrorCases)
    func uploadErrors(_ error: UploadError) async throws {
        var client = try await TestClient()
        let v2 = try await client.payload(group: .image, command: 1, operation: .write, error.request)
        if let code = error.v2 {
            #expect(v2["err"]?["group"] == 1)
            #expect(v2["err"]?["rc"] == CBOR(code))
        } else {
            #expect(v2["rc"] == CBOR(error.v1))
        }
        let v1 = try await client.payload(group: .image, command: 1, operation: .write, error.request, version: .v1)
        #expect(v1["rc"] == CBOR(error.v1))
    }

    struct FirstChunkRefusal: Sendable, CustomStringConvertible {
        var name: String
        var request: CBOR
        var code: ImageManagement.ReturnCode
        var description: String { name }
    }

    /// A header with the right magic and zeros elsewhere: on the observed server it passes every
    /// header check (Zephyr checks only the magic of the first chunk).
    static let blankHeader = Data([0x3d, 0xb8, 0xf3, 0x96] + Array(repeating: 0, count: 28))
    /// The 32-byte header of a real image.
    static let imageHeader = Data(TestImages.image("2.0.0").prefix(32))
    /// Larger than the default 0x40000-byte slot.
    static let tooLarge = CBOR(0x40000 + 1)

    /// Each request also breaks every check that comes later, so the code shows which check
    /// Zephyr 3.4 makes first (the order observed on a real server).
    static let firstChunkRefusals: [FirstChunkRefusal] = [
        FirstChunkRefusal(
            name: "off missing",
            request: ["data": .byteString(Data([1, 2]))],
            code: .invalidOffset
        ),
        FirstChunkRefusal(
            name: "len missing, with a full header",
            request: ["off": 0, "data": .byteString(blankHeader)],
            code: .invalidLength
        ),
        FirstChunkRefusal(
            name: "len missing, with data shorter than a header too",
            request: ["off": 0, "data": .byteString(Data([1, 2]))],
            code: .invalidLength
        ),
        FirstChunkRefusal(
            name: "data shorter than a header",
            request: ["off": 0, "len": tooLarge, "data": .byteString(Data([1, 2]))],
            code: .invalidImageHeader
        ),
        FirstChunkRefusal(
            name: "bad magic",
            request: ["off": 0, "len": tooLarge, "data": .byteString(Data(repeating: 0, count: 40))],
            code: .invalidImageHeaderMagic
        ),
        FirstChunkRefusal(
            name: "len larger than the slot, with a real image header",
            request: ["off": 0, "len": tooLarge, "data": .byteString(imageHeader)],
            code: .invalidImageTooLarge
        ),
        FirstChunkRefusal(
            name: "len larger than the slot, with the right magic and zeros elsewhere",
            request: ["off": 0, "len": tooLarge, "data": .byteString(blankHeader)],
            code: .invalidImageTooLarge
        ),
    ]

    @Test("first-chunk refusals come in the observed order", arguments: firstChunkRefusals)
    func firstChunkRefusalOrder(_ refusal: FirstChunkRefusal) async throws {
        let device = SimulatedDevice()
        let header = SMPHeader(version: .v2, operation: .write, length: 0, group: .image, sequence: 4, command: 1)
        let frame = try SMPFrame(header: header, payload: CBORWriter.encode(refusal.request))
        let responses = await device.handle(frame.bytes)
        try #require(responses.count == 1)
        let answer = try SMPFrame(parsing: responses[0]).payloadValue()
        #expect(answer["err"]?["group"] == 1)
        #expect(answer["err"]?["rc"] == CBOR(refusal.code.rawValue))
        // A refused first chunk opens no upload.
        #expect(await device.uploadSession == nil)
    }

    @Test("state write refusals: wrong types, unknown hash, testing the active image")
    func stateWriteErrors() async throws {
        var client = try await TestClient()
        #expect(try await client.payload(group: .image, command: 0, operation: .write, ["hash": "x"])["rc"] == 3)
        #expect(try await client.payload(group: .image, command: 0, operation: .write, ["confirm": 1])["rc"] == 3)
        let missing = await deviceError {
            _ = try await client.send(ImageManagement.StateWrite(hash: Data(repeating: 9, count: 32)))
        }
        #expect(missing?.matches(ImageManagement.ReturnCode.hashNotFound) == true)
        let noHash = await deviceError { _ = try await client.send(ImageManagement.StateWrite(confirm: false)) }
        #expect(noHash?.matches(ImageManagement.ReturnCode.invalidHash) == true)
        let active = try await client.send(ImageManagement.StateRead()).images[0].hash
        let denied = await deviceError {
            _ = try await client.send(ImageManagement.StateWrite(hash: active, confirm: false))
        }
        #expect(denied?.matches(ImageManagement.ReturnCode.imageSettingTestToActiveDenied) == true)
    }

    @Test("plain DirectXIP has no state write handler")
    func directXIPHasNoStateWrite() async throws {
        var client = try await TestClient(configuration: .init(bootloaderMode: .directXIP))
        let error = await deviceError { _ = try await client.send(ImageManagement.StateWrite(confirm: true)) }
        #expect(error?.returnCode == .notSupported)
    }

    @Test("erase: default slot 1, refuses the running or pending slot, ends the upload session")
    func erase() async throws {
        var client = try await TestClient()
        let image = TestImages.image("2.0.0")
        _ = try await client.send(
            ImageManagement.Upload(offset: 0, data: Data(image.prefix(400)), length: UInt64(image.count))
        )
        _ = try await client.send(ImageManagement.Erase())
        #expect(await client.device.uploadSession == nil)
        let running = await deviceError { _ = try await client.send(ImageManagement.Erase(slot: 0)) }
        #expect(running?.matches(ImageManagement.ReturnCode.noFreeSlot) == true)
        let v1 = await deviceError { _ = try await client.send(ImageManagement.Erase(slot: 0), version: .v1) }
        #expect(v1?.returnCode == .badState)
        #expect(try await client.upload(image) == true)
        _ = try await client.send(ImageManagement.StateWrite(hash: TestImages.hash(image), confirm: false))
        let pending = await deviceError { _ = try await client.send(ImageManagement.Erase(slot: 1)) }
        #expect(pending?.matches(ImageManagement.ReturnCode.noFreeSlot) == true)
    }

    @Test(
        "erasing a slot that does not exist: FLASH_OPEN_FAILED in 3.4, INVALID_SLOT in newer releases",
        arguments: [(ZephyrRelease.v3_4, ImageManagement.ReturnCode.flashOpenFailed), (.latest, .invalidSlot)]
    )
    func eraseMissingSlot(release: ZephyrRelease, expected: ImageManagement.ReturnCode) async throws {
        var client = try await TestClient(configuration: .init(release: release))
        let error = await deviceError { _ = try await client.send(ImageManagement.Erase(slot: 9)) }
        #expect(error?.matches(expected) == true, "\(String(describing: error))")
    }

    @Test("erasing a blank slot: 3.4 answers UNKNOWN, newer releases succeed; a written slot erases in both")
    func eraseBlankSlot() async throws {
        var old = try await TestClient()
        let refused = await deviceError { _ = try await old.send(ImageManagement.Erase(slot: 1)) }
        #expect(refused?.matches(ImageManagement.ReturnCode.unknown) == true, "\(String(describing: refused))")
        #expect(try await old.upload(TestImages.image("2.0.0")) == true)
        _ = try await old.send(ImageManagement.Erase(slot: 1))
        #expect(await old.device.bootloader.slots[0][1] == .erased)

        var latest = try await TestClient(configuration: .init(release: .latest))
        _ = try await latest.send(ImageManagement.Erase(slot: 1))
        _ = try await latest.send(ImageManagement.Erase())
        #expect(await latest.device.bootloader.slots[0][1] == .erased)
    }

    @Test("slot info lists each image's slots and sizes")
    func slotInfo() async throws {
        var client = try await TestClient(configuration: .init(imageCount: 2, slotSize: 0x20000))
        let info = try await client.send(ImageManagement.SlotInfo())
        #expect(info.images.map(\.image) == [0, 1])
        #expect(info.images[0].slots.map(\.slot) == [0, 1])
        #expect(info.images[0].slots.allSatisfy { $0.size == 0x20000 })
        // 3.4 has no "too large" checks: slot sizes only.
        #expect(info.images.allSatisfy { $0.maxImageSize == nil })
        // Newer releases with them report the largest image MCUboot boots: the slot less its
        // trailer (432 bytes with Zephyr's defaults).
        var latest = try await TestClient(configuration: .init(release: .latest, imageCount: 1, slotSize: 0x20000))
        let limits = try await latest.send(ImageManagement.SlotInfo())
        #expect(limits.images.map(\.maxImageSize) == [0x20000 - 432])
    }

    @Test("uploading while a test image runs unconfirmed is refused: the old image must stay")
    func noUploadDuringRevertWindow() async throws {
        var client = try await TestClient()
        let image = TestImages.image("2.0.0")
        #expect(try await client.upload(image) == true)
        _ = try await client.send(ImageManagement.StateWrite(hash: TestImages.hash(image), confirm: false))
        _ = try await client.send(OSManagement.Reset())
        await client.device.waitUntilAnswering()
        #expect(await client.device.imageStates.first { $0.isActive }?.version == "2.0.0")
        let error = await deviceError { _ = try await client.upload(TestImages.image("3.0.0")) }
        #expect(error?.matches(ImageManagement.ReturnCode.noFreeSlot) == true)
    }

    /// On the device's own clock (a test clock here): the first chunk is answered once the erase
    /// of the image's length has taken its time, not a tick before.
    @Test("flash timing delays the first chunk (erase) but not the answer's content")
    func flashTiming() async throws {
        let clock = ManualClock()
        var configuration = SimulatedDevice.Configuration(slotSize: 0x40000, eraseBytesPerSecond: 100_000)
        configuration.requestProcessingTime = .zero
        configuration.clock = SMPClock(clock)
        let client = try await TestClient(configuration: configuration)
        let image = TestImages.image("2.0.0")
        let erase = Duration.milliseconds(Int64(Double(image.count) / 100_000 * 1000))
        #expect(erase > .milliseconds(10))
        let upload = ImageManagement.Upload(offset: 0, data: Data(image.prefix(100)), length: UInt64(image.count))
        try await client.connection.send(SMPFrame.request(upload, sequence: 1).bytes)
        // The device waits on its clock for the erase (an event, not a time).
        _ = try await RealIO.poll(timeout: .seconds(60)) { clock.sleeperCount == 1 ? true : nil }
        clock.advance(by: erase - .milliseconds(1))
        #expect(clock.sleeperCount == 1)
        #expect(await client.collector.next(timeout: .zero) == nil)
        clock.advance(by: .milliseconds(1))
        let answer = try #require(try await client.nextFrame())
        #expect(try answer.decodeResponse(to: ImageManagement.Upload.self).offset == 100)
    }

    static let image = TestImages.image("2.0.0")

    /// Opens an upload of ``image`` with its first 512 bytes.
    static let openUpload: AnswerCase.Step = { client in
        let sha = Data(ImageHashAlgorithm.sha256.hash(image))
        let first = Data(image.prefix(512))
        _ = try await client.send(
            ImageManagement.Upload(offset: 0, data: first, length: UInt64(image.count), sha256: sha)
        )
    }

    static let answers: [AnswerCase] = [
        AnswerCase(
            "state list",
            ImageManagement.StateRead(),
            [
                "bf",  // {_
                "66696d61676573",  //   "images":
                "9f",  //   [_
                "bf",  //     {_
                "64736c6f7400",  //       "slot": 0
                "6776657273696f6e65312e302e30",  //       "version": "1.0.0"
                "64686173685820863a2709d8d2c69d900205d09d",  //       "hash": h'863a2709…' (32 bytes)
                "2629a0e9055ab8d9c12cf1c698308a039e67e8",
                "68626f6f7461626c65f5",  //       "bootable": true
                "6770656e64696e67f4",  //       "pending": false
                "69636f6e6669726d6564f5",  //       "confirmed": true
                "66616374697665f5",  //       "active": true
                "697065726d616e656e74f4",  //       "permanent": false
                "ff",  //     }
                "ff",  //   ]
                "6b73706c697453746174757300",  //   "splitStatus": 0
                "ff",  // }
            ]
        ),
        AnswerCase(
            "state list of two images",
            on: .init(imageCount: 2),
            ImageManagement.StateRead(),
            [
                "bf",  // {_
                "66696d61676573",  //   "images":
                "9f",  //   [_
                "bf",  //     {_
                "65696d61676500",  //       "image": 0
                "64736c6f7400",  //       "slot": 0
                "6776657273696f6e65312e302e30",  //       "version": "1.0.0"
                "64686173685820863a2709d8d2c69d900205d09d",  //       "hash": h'863a2709…' (32 bytes)
                "2629a0e9055ab8d9c12cf1c698308a039e67e8",
                "68626f6f7461626c65f5",  //       "bootable": true
                "6770656e64696e67f4",  //       "pending": false
                "69636f6e6669726d6564f5",  //       "confirmed": true
                "66616374697665f5",  //       "active": true
                "697065726d616e656e74f4",  //       "permanent": false
                "ff",  //     }
                "bf",  //     {_
                "65696d61676501",  //       "image": 1
                "64736c6f7400",  //       "slot": 0
                "6776657273696f6e65312e302e30",  //       "version": "1.0.0"
                "64686173685820c505e15f2ce26d7524b952d3e2",  //       "hash": h'c505e15f…' (32 bytes)
                "4031ad213ac81d229b3a9346329af8a7575d6c",
                "68626f6f7461626c65f5",  //       "bootable": true
                "6770656e64696e67f4",  //       "pending": false
                "69636f6e6669726d6564f5",  //       "confirmed": true
                "66616374697665f5",  //       "active": true
                "697065726d616e656e74f4",  //       "permanent": false
                "ff",  //     }
                "ff",  //   ]
                "6b73706c697453746174757300",  //   "splitStatus": 0
                "ff",  // }
            ]
        ),
        AnswerCase(
            "slot info",
            ImageManagement.SlotInfo(),
            [
                "bf",  // {_
                "66696d61676573",  //   "images":
                "9f",  //   [_
                "bf",  //     {_
                "65696d61676500",  //       "image": 0
                "65736c6f7473",  //       "slots":
                "9f",  //       [_
                "bf",  //         {_
                "64736c6f7400",  //           "slot": 0
                "6473697a651a00040000",  //           "size": 262144
                "ff",  //         }
                "bf",  //         {_
                "64736c6f7401",  //           "slot": 1
                "6473697a651a00040000",  //           "size": 262144
                "ff",  //         }
                "ff",  //       ]
                "ff",  //     } (no max_image_size: 3.4 has no "too large" checks)
                "ff",  //   ]
                "ff",  // }
            ]
        ),
        AnswerCase(
            "first chunk",
            ImageManagement.Upload(
                offset: 0,
                data: Data(image.prefix(512)),
                length: UInt64(image.count),
                sha256: Data(ImageHashAlgorithm.sha256.hash(image))
            ),
            [
                "bf",  // {_
                "636f6666190200",  //   "off": 512
                "ff",  // }
            ]
        ),
        AnswerCase(
            "a chunk at the wrong offset: the offset expected",
            before: openUpload,
            ImageManagement.Upload(offset: 1024, data: Data(image[1024..<1100])),
            [
                "bf",  // {_
                "636f6666190200",  //   "off": 512
                "ff",  // }
            ]
        ),
        AnswerCase(
            "the last chunk: offset, then match",
            before: openUpload,
            ImageManagement.Upload(offset: 512, data: Data(image[512...])),
            [
                "bf",  // {_
                "636f6666190628",  //   "off": 1576
                "656d61746368f5",  //   "match": true
                "ff",  // }
            ]
        ),
    ]

    @Test("answers byte for byte as Zephyr's img_mgmt.c writes them", arguments: answers)
    func answerBytes(_ answer: AnswerCase) async throws {
        try await answer.check()
    }
}
