import Foundation
import MCUboot
import MCUmgr
import SMPCBOR
import SMPCore
import SMPTestSupport
import Testing

@testable import SMPSimulator

@Suite("SimulatedDevice")
struct SimulatedDeviceTests {
    static func frame(
        group: UInt16,
        command: UInt8,
        operation: UInt8 = 2,
        version: UInt8 = 1,
        sequence: UInt8 = 7,
        payload: [UInt8] = [0xa0]
    ) -> [UInt8] {
        [
            version << 3 | operation, 0, UInt8(payload.count >> 8), UInt8(payload.count & 0xff), UInt8(group >> 8),
            UInt8(group & 0xff), sequence, command,
        ] + payload
    }

    static func payload(_ response: [UInt8]) throws -> CBOR {
        try SMPFrame(parsing: response).payloadValue()
    }

    @Test("echo is answered byte for byte as zcbor writes it, sequence and version copied")
    func echoBytes() async {
        let device = SimulatedDevice()
        let request = TestBytes.hex("0a00000900000000a161646568656c6c6f")
        let responses = await device.handle(request)
        #expect(responses.map { TestBytes.hex($0) } == ["0b00000a00000000bf617265" + "68656c6c6fff"])
        let v1 = await device.handle(TestBytes.hex("0200000900000300a161646568656c6c6f"))
        #expect(v1.first.map { Array($0.prefix(8)) } == TestBytes.hex("0300000a00000300"))
    }

    @Test("definite maps when zcbor's indefinite encoding is turned off")
    func definiteMaps() async {
        let device = SimulatedDevice(configuration: .init(zcborIndefiniteMaps: false))
        let responses = await device.handle(TestBytes.hex("0a00000900000000a161646568656c6c6f"))
        #expect(responses.map { TestBytes.hex($0) } == ["0b00000900000000a161726568656c6c6f"])
    }

    @Test(
        "the SMP layer: versions, unknown groups and commands, responses and junk",
        arguments: [
            (
                "v3 header → rc 13", frame(group: 0, command: 0, version: 3, payload: [0xa1, 0x61, 0x64, 0x61, 0x78]),
                13 as Int?
            ),
            ("reserved v2 value → rc 13", frame(group: 0, command: 6, operation: 0, version: 2), 13),
            ("unknown group → rc 8", frame(group: 77, command: 0), 8),
            ("log group (Mynewt only) → rc 8", frame(group: 4, command: 0, operation: 0), 8),
            ("unknown command → rc 8", frame(group: 0, command: 99), 8),
            ("params as a write → rc 8", frame(group: 0, command: 6, operation: 2), 8),
            ("reset as a read → rc 8", frame(group: 0, command: 5, operation: 0), 8),
            ("payload not CBOR → rc 3", frame(group: 1, command: 0, payload: [0xff, 0x00]), 3),
            ("payload an array → rc 3", frame(group: 3, command: 0, payload: [0x80]), 3),
            ("header longer than the data → rc 9", Array(frame(group: 0, command: 0).dropLast()) + [], nil),
            ("a response is dropped", frame(group: 0, command: 0, operation: 3), nil),
            ("an undefined operation is dropped", frame(group: 0, command: 0, operation: 5), nil),
            ("seven bytes are dropped", [0x0a, 0, 0, 0, 0, 0, 0], nil),
            ("nothing is dropped", [], nil),
        ]
    )
    func smpLayer(name: String, frame: [UInt8], rc: Int?) async throws {
        let device = SimulatedDevice()
        let responses = await device.handle(frame)
        if name.contains("rc 9") {
            // The header announces one byte more than arrived.
            let response = try #require(responses.first)
            #expect(try Self.payload(response)["rc"] == 9)
            return
        }
        guard let rc else {
            #expect(responses.isEmpty, "\(name)")
            return
        }
        let response = try #require(responses.first, "\(name)")
        #expect(try Self.payload(response)["rc"] == CBOR(rc), "\(name)")
        #expect(response[6] == 7)
    }

    @Test("a group error goes to v2 clients as err, and to v1 clients as the translated rc")
    func versionedErrors() async throws {
        let device = SimulatedDevice()
        let unknownHash: CBOR = ["hash": .byteString(Data(repeating: 1, count: 32))]
        let body = CBORWriter.encode(unknownHash)
        let v2 = try #require(await device.handle(Self.frame(group: 1, command: 0, version: 1, payload: body)).first)
        #expect(try Self.payload(v2)["err"]?["group"] == 1)
        #expect(try Self.payload(v2)["err"]?["rc"] == 8)  // HASH_NOT_FOUND
        let v1 = try #require(await device.handle(Self.frame(group: 1, command: 0, version: 0, payload: body)).first)
        #expect(try Self.payload(v1)["rc"] == 1)  // EUNKNOWN
        #expect(v1[0] == 0x03)
    }

    @Test("a frame larger than the buffer is dropped")
    func oversized() async {
        let device = SimulatedDevice(configuration: .init(bufferSize: 64))
        let text = String(repeating: "x", count: 80)
        let frame = Self.frame(group: 0, command: 0, payload: CBORWriter.encode(["d": .textString(text)]))
        #expect(await device.handle(frame).isEmpty)
    }

    @Test("a response that does not fit the buffer becomes EMSGSIZE")
    func responseTooLarge() async throws {
        let device = SimulatedDevice(configuration: .init(bufferSize: 128, imageCount: 4))
        let response = try #require(await device.handle(Self.frame(group: 1, command: 0, operation: 0)).first)
        #expect(try Self.payload(response)["rc"] == 7)
    }

    @Test("several requests packed in one message are answered in order")
    func packedRequests() async {
        let device = SimulatedDevice()
        let first = Self.frame(group: 0, command: 6, operation: 0, sequence: 1)  // 9 bytes → padded to 12
        let second = Self.frame(group: 0, command: 6, operation: 0, sequence: 2)
        let responses = await device.handle(first + [0, 0, 0] + second)
        #expect(responses.map { $0[6] } == [1, 2])
    }

    @Test("random bytes, truncations and bit flips never crash it, and it keeps serving")
    func fuzz() async throws {
        let device = SimulatedDevice(configuration: .init(bufferSize: 512))
        var generator = TestBytes.SeededGenerator(seed: 2026)
        let seeds: [[UInt8]] = [
            Self.frame(
                group: 1,
                command: 1,
                payload: CBORWriter.encode([
                    "off": 0, "len": 100, "data": .byteString(Data(TestImages.image("2.0.0").prefix(64))),
                ])
            ),
            Self.frame(
                group: 8,
                command: 0,
                payload: CBORWriter.encode([
                    "off": 0, "name": "/lfs1/f", "len": 3, "data": .byteString(Data([1, 2, 3])),
                ])
            ),
            Self.frame(
                group: 3,
                command: 0,
                payload: CBORWriter.encode(["name": "a/b", "val": .byteString(Data([1]))])
            ),
            Self.frame(group: 0, command: 4, payload: CBORWriter.encode(["datetime": "2026-01-01T00:00:00"])),
            Self.frame(group: 9, command: 0, payload: CBORWriter.encode(["argv": ["echo", "hi"]])),
            Self.frame(
                group: 66,
                command: 2,
                payload: CBORWriter.encode(["off": 0, "len": 4, "data": .byteString(Data([0xd8, 0x6b, 0xa0, 0]))])
            ),
        ]
        for round in 0..<1500 {
            var bytes: [UInt8]
            switch round % 4 {
            case 0:
                bytes = (0..<Int.random(in: 0..<64, using: &generator)).map { _ in
                    UInt8.random(in: 0...255, using: &generator)
                }
            case 1:
                let seed = seeds[Int.random(in: 0..<seeds.count, using: &generator)]
                bytes = Array(seed.prefix(Int.random(in: 0...seed.count, using: &generator)))
            case 2:
                bytes = seeds[Int.random(in: 0..<seeds.count, using: &generator)]
                for _ in 0..<3 {
                    let index = Int.random(in: 8..<bytes.count, using: &generator)
                    bytes[index] ^= UInt8(1) << UInt8.random(in: 0...7, using: &generator)
                }
            default:
                // A valid header with random CBOR.
                let body = (0..<Int.random(in: 0..<40, using: &generator)).map { _ in
                    UInt8.random(in: 0...255, using: &generator)
                }
                let groups: [UInt16] = [0, 1, 2, 3, 8, 9, 10, 63, 66]
                bytes = Self.frame(
                    group: groups[Int.random(in: 0..<groups.count, using: &generator)],
                    command: UInt8.random(in: 0...8, using: &generator),
                    operation: [0, 2].randomElement(using: &generator)!,
                    payload: body
                )
            }
            for response in await device.handle(bytes) {
                _ = try SMPFrame(parsing: response)
            }
        }
        // Some of the junk is a valid `os reset`: let an announced reboot finish first.
        await device.waitUntilAnswering()
        let echo = await device.handle(Self.frame(group: 0, command: 0, payload: CBORWriter.encode(["d": "alive"])))
        #expect(try echo.first.map { try Self.payload($0)["r"] } == "alive")
    }

    @Test("busy fault answers rc 10 without processing; then normal service resumes")
    func busy() async throws {
        let device = SimulatedDevice()
        await device.inject(.busy(count: 2))
        let params = Self.frame(group: 0, command: 6, operation: 0)
        for _ in 0..<2 { #expect(try Self.payload(#require(await device.handle(params).first))["rc"] == 10) }
        #expect(try Self.payload(#require(await device.handle(params).first))["buf_size"] == 2048)
    }

    @Test("power loss at a request: no answer, RAM state lost, the device boots again")
    func powerLossAtRequest() async throws {
        let device = SimulatedDevice()
        let image = TestImages.image("2.0.0")
        let first = Self.frame(
            group: 1,
            command: 1,
            payload: CBORWriter.encode([
                "off": 0, "len": CBOR(image.count), "data": .byteString(Data(image.prefix(600))),
                "sha": .byteString(Data(ImageHashAlgorithm.sha256.hash(image))),
            ])
        )
        #expect(!(await device.handle(first)).isEmpty)
        #expect(await device.uploadSession?.offset == 600)
        await device.setFaults(Faults([.powerLoss(.atRequest(1))]))
        #expect(await device.handle(Self.frame(group: 0, command: 6, operation: 0)).isEmpty)
        #expect(await device.uploadSession == nil)
        #expect(await device.bootCount == 2)
    }

    @Test("power loss during an upload chunk loses that chunk and the session")
    func powerLossDuringUpload() async throws {
        var client = try await TestClient()
        let image = TestImages.image("2.0.0")
        await client.device.inject(.powerLoss(.duringUpload(atOffset: 700)))
        let sha = Data(ImageHashAlgorithm.sha256.hash(image))
        let first = try await client.send(
            ImageManagement.Upload(offset: 0, data: Data(image.prefix(512)), length: UInt64(image.count), sha256: sha)
        )
        #expect(first.offset == 512)
        let lost = try SMPFrame.request(
            ImageManagement.Upload(offset: 512, data: Data(image[512..<1024])),
            sequence: 50
        )
        #expect(try await client.raw(lost.bytes, timeout: .milliseconds(300)) == nil)
        // The device boots again and is silent until it is up.
        await client.device.waitUntilAnswering()
        // After the reboot the device has no session: a chunk mid-way gets off 0.
        let after = try await client.send(ImageManagement.Upload(offset: 512, data: Data(image[512..<1024])))
        #expect(after.offset == 0)
        #expect(try await client.upload(image) == true)
    }

    @Test("power loss during the swap: the swap resumes and the result is the same")
    func powerLossDuringSwap() async throws {
        var client = try await TestClient()
        let image = TestImages.image("2.0.0")
        #expect(try await client.upload(image) == true)
        _ = try await client.send(ImageManagement.StateWrite(hash: TestImages.hash(image), confirm: false))
        await client.device.inject(.powerLoss(.duringSwap))
        _ = try await client.send(OSManagement.Reset())
        await client.device.waitUntilAnswering()
        let states = await client.device.imageStates
        #expect(states.first { $0.isActive }?.version == "2.0.0")
        #expect(await client.device.bootCount == 3)
    }

    /// The preview runs MCUboot's own decision on a copy: it says what the reset then does, and
    /// the device is untouched until it happens.
    @Test("the next boot is previewed without changing the device, and the reset does what it said")
    func nextBootPreview() async throws {
        var client = try await TestClient()
        let idle = await client.device.nextBoot
        #expect(idle.stage == .application)
        #expect(idle.running.map(\.version) == ["1.0.0"])
        let image = TestImages.image("2.0.0")
        #expect(try await client.upload(image) == true)
        _ = try await client.send(ImageManagement.StateWrite(hash: TestImages.hash(image), confirm: false))
        let before = await client.device.imageStates
        let preview = await client.device.nextBoot
        #expect(preview.log.contains("image 0: test swap"), "\(preview.log)")
        #expect(preview.running.map(\.version) == ["2.0.0"])
        #expect(await client.device.imageStates == before)
        #expect(await client.device.bootCount == 1)
        await client.device.reset()
        #expect(await client.device.bootloader.lastBootLog == preview.log)
        #expect(await client.device.imageStates.filter(\.isActive) == preview.running)
    }

    /// Longer than any test runs: what must not happen within it does not, however slow the
    /// machine.
    static let never = Duration.seconds(3600)

    @Test("os reset is answered and the device runs on for the reset delay, answering")
    func resetDelay() async throws {
        let device = SimulatedDevice(configuration: .init(resetDelay: Self.never))
        var client = try await TestClient(device)
        _ = try await client.send(OSManagement.Reset())
        #expect(try await client.send(OSManagement.Echo(text: "still up")).text == "still up")
        #expect(await device.bootCount == 1)
        #expect(await device.isRunning)
        // A power cycle (or the reset button) meanwhile reboots at once.
        await device.reset()
        #expect(await device.bootCount == 2)
    }

    /// Without a reset delay nothing races the reboot: the answer to the reset goes out, and the
    /// next request, however soon, finds the device booting.
    @Test("with no reset delay the device reboots as its answer goes out")
    func noResetDelay() async throws {
        let device = SimulatedDevice(configuration: .init(resetDelay: .zero, bootTime: Self.never))
        var client = try await TestClient(device)
        _ = try await client.send(OSManagement.Reset())
        let echo = Self.frame(group: 0, command: 0, payload: CBORWriter.encode(["d": "up?"]))
        #expect(await device.handle(echo).isEmpty)
        #expect(await device.bootCount == 2)
    }

    @Test("after the reset delay the device reboots; waitUntilAnswering returns once it is back")
    func rebootAfterReset() async throws {
        var client = try await TestClient()
        _ = try await client.send(OSManagement.Reset())
        await client.device.waitUntilAnswering()
        #expect(await client.device.bootCount == 2)
        #expect(try await client.send(OSManagement.Echo(text: "back")).text == "back")
        // Nothing more is announced: waiting again returns at once, with no second reboot.
        await client.device.waitUntilAnswering()
        #expect(await client.device.bootCount == 2)
    }

    @Test("while the device boots it answers nothing")
    func silentWhileBooting() async throws {
        let device = SimulatedDevice(configuration: .init(bootTime: Self.never))
        let echo = Self.frame(group: 0, command: 0, payload: CBORWriter.encode(["d": "up?"]))
        await device.reset()
        #expect(await device.bootCount == 2)
        #expect(await device.handle(echo).isEmpty)
        #expect(await device.receive(echo) { _ in Issue.record("answered while booting") } == false)
    }

    @Test("reset() reboots at once; waitUntilAnswering returns once the boot time is over")
    func powerCycle() async throws {
        let device = SimulatedDevice()
        let echo = Self.frame(group: 0, command: 0, payload: CBORWriter.encode(["d": "up?"]))
        await device.reset()
        #expect(await device.bootCount == 2)
        await device.waitUntilAnswering()
        #expect(try Self.payload(#require(await device.handle(echo).first))["r"] == "up?")
        #expect(await device.bootCount == 2)
    }

    @Test("legacy return codes: every success answer carries rc 0, and the error answers are unchanged")
    func legacyReturnCodes() async throws {
        let device = SimulatedDevice(configuration: .init(legacyReturnCodes: true))
        let echo = try Self.payload(
            #require(
                await device.handle(Self.frame(group: 0, command: 0, payload: CBORWriter.encode(["d": "x"]))).first
            )
        )
        #expect(echo["r"] == "x")
        #expect(echo["rc"] == 0)
        let params = try Self.payload(
            #require(await device.handle(Self.frame(group: 0, command: 6, operation: 0)).first)
        )
        #expect(params["rc"] == 0)
        let unknown = try Self.payload(#require(await device.handle(Self.frame(group: 0, command: 99)).first))
        #expect(unknown["rc"] == 8)
        // Without the option (the default) a success answer has no rc.
        let plain = try Self.payload(
            #require(await SimulatedDevice().handle(Self.frame(group: 0, command: 6, operation: 0)).first)
        )
        #expect(plain["rc"] == nil)
        #expect(plain["buf_count"] == 4)
    }

    @Test("dropped requests get no answer")
    func droppedRequests() async {
        let device = SimulatedDevice()
        await device.inject(.dropRequests(every: 2))
        let params = Self.frame(group: 0, command: 6, operation: 0)
        #expect(!(await device.handle(params)).isEmpty)
        #expect(await device.handle(params).isEmpty)
        #expect(await device.faults.faults == [.dropRequests(every: 2)])
    }

    @Test("a state directory keeps flash, settings and files across restarts")
    func persistence() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sim-state-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let configuration = SimulatedDevice.Configuration(stateDirectory: folder)
        let image = TestImages.image("2.0.0")
        do {
            var client = try await TestClient(configuration: configuration)
            #expect(try await client.upload(image) == true)
            _ = try await client.send(ImageManagement.StateWrite(hash: TestImages.hash(image), confirm: false))
            _ = try await client.send(SettingsManagement.Write(name: "app/name", value: Data("sim".utf8)))
            _ = try await client.send(SettingsManagement.Save())
            _ = try await client.send(
                FileManagement.Upload(offset: 0, data: Data("kept".utf8), name: "/lfs1/keep.txt", length: 4)
            )
        }
        var client = try await TestClient(configuration: configuration)
        let states = await client.device.imageStates
        #expect(states.contains { $0.slot == 1 && $0.version == "2.0.0" && $0.isPending })
        #expect(try await client.send(SettingsManagement.Read(name: "app/name")).value == Data("sim".utf8))
        #expect(try await client.send(FileManagement.Status(name: "/lfs1/keep.txt")).length == 4)
        _ = try await client.send(OSManagement.Reset())
        // The swap happens, and is saved, when the device actually reboots.
        await client.device.waitUntilAnswering()
        let restarted = SimulatedDevice(configuration: configuration)
        #expect(await restarted.imageStates.first { $0.isActive }?.version == "2.0.0")
    }

    @Test("a device with nothing bootable answers nothing, until the recovery button is held")
    func bricked() async throws {
        let device = SimulatedDevice(configuration: .init(bootloaderMode: .singleSlot, startsInRecovery: true))
        var client = try await TestClient(device)
        let garbage = Array(TestImages.image("2.0.0").prefix(700))
        let upload = ImageManagement.Upload(offset: 0, data: Data(garbage), length: UInt64(garbage.count))
        _ = try await client.send(upload, version: .v1)
        await device.reset()
        #expect(await device.stage == .halted)
        #expect(await device.isRunning == false)
        #expect(await device.handle(Self.frame(group: 0, command: 6, operation: 0)).isEmpty)
        #expect(await device.isRecoverable)
        await device.reset(holdingRecoveryButton: true)
        #expect(await device.stage == .serialRecovery)
        await device.waitUntilAnswering()
        #expect(await device.handle(Self.frame(group: 1, command: 0, operation: 0)).count == 1)
    }
}

/// Every field of every request, replaced by values of the wrong type: the answer is an error
/// (EINVAL or the group's code), never a crash, never a silent success.
@Suite("SimulatedDevice wrong types")
struct WrongTypeTests {
    struct Template: Sendable, CustomStringConvertible {
        var group: UInt16
        var command: UInt8
        var operation: UInt8
        var fields: [(String, CBOR)]
        var description: String { "group \(group) command \(command) op \(operation)" }
    }

    static let data: CBOR = .byteString(Data(TestImages.image("2.0.0").prefix(64)))
    static let templates: [Template] = [
        Template(group: 0, command: 0, operation: 2, fields: [("d", "hi")]),
        Template(group: 0, command: 4, operation: 2, fields: [("datetime", "2025-01-01T00:00:00")]),
        Template(group: 0, command: 7, operation: 0, fields: [("format", "s")]),
        Template(group: 0, command: 8, operation: 0, fields: [("query", "mode")]),
        Template(
            group: 1,
            command: 0,
            operation: 2,
            fields: [("hash", .byteString(Data(repeating: 1, count: 32))), ("confirm", false)]
        ),
        Template(
            group: 1,
            command: 1,
            operation: 2,
            fields: [
                ("off", 0), ("len", 100), ("data", data), ("sha", .byteString(Data([1]))), ("image", 0),
                ("upgrade", false),
            ]
        ),
        Template(group: 1, command: 5, operation: 2, fields: [("slot", 1)]),
        Template(group: 2, command: 0, operation: 0, fields: [("name", "smp_svr_stats")]),
        Template(group: 3, command: 0, operation: 0, fields: [("name", "a"), ("max_size", 10)]),
        Template(group: 3, command: 0, operation: 2, fields: [("name", "a"), ("val", .byteString(Data([1])))]),
        Template(group: 3, command: 1, operation: 2, fields: [("name", "a")]),
        Template(group: 3, command: 3, operation: 2, fields: [("name", "a")]),
        Template(group: 8, command: 0, operation: 0, fields: [("off", 0), ("name", "/lfs1/x")]),
        Template(
            group: 8,
            command: 0,
            operation: 2,
            fields: [("off", 0), ("data", .byteString(Data([1]))), ("name", "/lfs1/x"), ("len", 1)]
        ),
        Template(group: 8, command: 1, operation: 0, fields: [("name", "/lfs1/x")]),
        Template(
            group: 8,
            command: 2,
            operation: 0,
            fields: [("name", "/lfs1/x"), ("type", "crc32"), ("off", 0), ("len", 1)]
        ),
        Template(group: 9, command: 0, operation: 2, fields: [("argv", ["echo", "x"])]),
        Template(group: 10, command: 2, operation: 0, fields: [("index", 0)]),
        Template(group: 10, command: 3, operation: 0, fields: [("groups", [0, 1])]),
        Template(group: 66, command: 1, operation: 0, fields: [("role", 32)]),
        Template(
            group: 66,
            command: 2,
            operation: 2,
            fields: [("off", 0), ("data", .byteString(Data([1]))), ("len", 1)]
        ),
        Template(
            group: 66,
            command: 4,
            operation: 2,
            fields: [("stream_session_id", 1), ("off", 0), ("data", .byteString(Data([1]))), ("len", 1)]
        ),
    ]

    static let wrongValues: [CBOR] = ["text", -1, .byteString(Data([9])), [1, "a"], ["k": 1], true, .null]

    static func major(_ value: CBOR) -> Int {
        switch value {
        case .unsignedInt: 0
        case .negativeInt: 1
        case .byteString: 2
        case .textString: 3
        case .array: 4
        case .map: 5
        case .boolean: 7
        default: 8
        }
    }

    @Test("wrong types for every field are refused", arguments: templates)
    func wrongTypes(template: Template) async throws {
        for (index, field) in template.fields.enumerated() {
            for wrong in Self.wrongValues where Self.major(wrong) != Self.major(field.1) {
                var map = CBORMap()
                for (other, entry) in template.fields.enumerated() {
                    map.append(key: .textString(entry.0), value: other == index ? wrong : entry.1)
                }
                let device = SimulatedDevice()
                let frame = SimulatedDeviceTests.frame(
                    group: template.group,
                    command: template.command,
                    operation: template.operation,
                    payload: CBORWriter.encode(.map(map))
                )
                let response = try #require(await device.handle(frame).first, "\(template) \(field.0)=\(wrong)")
                let payload = try SMPFrame(parsing: response).payloadValue()
                let refused = payload["err"] != nil || (payload["rc"]?.int64Value ?? 0) != 0
                #expect(refused, "\(template) \(field.0)=\(wrong.diagnostic()) answered \(payload.diagnostic())")
                // And the device keeps serving.
                #expect(await device.handle(SimulatedDeviceTests.frame(group: 0, command: 6, operation: 0)).count == 1)
            }
        }
    }
}
