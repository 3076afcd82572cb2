import Foundation
import MCUboot
import SMPCBOR
import SMPCore
import SMPLink
import SMPTestSupport
import Testing

@testable import SMPSimulator

/// MCUboot's serial recovery as the simulator serves it, byte for byte where MCUboot's answers
/// are known (`boot_serial.c`; docs/SIMULATOR.md "Serial recovery").
@Suite("SerialRecoveryServer")
struct SerialRecoveryServerTests {
    static func recovery(
        _ mode: BootloaderMode = .singleSlot,
        images: Int = 1,
        options: SerialRecoveryConfiguration = .init(),
        key: ImagePublicKey? = nil
    ) -> SimulatedDevice {
        SimulatedDevice(
            configuration: .init(
                imageCount: images,
                bootloaderMode: mode,
                signingKey: key,
                serialRecovery: options,
                startsInRecovery: true
            )
        )
    }

    static func frame(
        group: UInt16,
        command: UInt8,
        operation: UInt8 = 2,
        version: UInt8 = 0,
        _ map: CBOR? = .map([:])
    ) -> [UInt8] {
        SimulatedDeviceTests.frame(
            group: group,
            command: command,
            operation: operation,
            version: version,
            payload: map.map { CBORWriter.encode($0) } ?? []
        )
    }

    static func upload(_ fields: [(String, CBOR)]) -> [UInt8] {
        frame(group: 1, command: 1, .map(CBORMap(fields.map { CBORMap.Entry(key: .textString($0.0), value: $0.1) })))
    }

    /// The answer's payload, with its header checked against MCUboot's rule (operation + 1,
    /// flags 0, group, sequence and command copied).
    static func answer(_ device: SimulatedDevice, _ request: [UInt8]) async throws -> CBOR {
        let responses = await device.handle(request)
        let response = try #require(responses.first, "no answer")
        #expect(responses.count == 1)
        let header = try SMPHeader(parsing: response)
        let sent = try SMPHeader(parsing: request)
        #expect(header.operation == sent.operation.response)
        #expect(header.flags == 0 && header.group == sent.group && header.command == sent.command)
        #expect(header.sequence == sent.sequence && header.version == sent.version)
        return try SMPFrame(parsing: response).payloadValue()
    }

    static func rc(_ value: CBOR) -> Int? { value["rc"]?.int64Value.map(Int.init) }
    static func offset(_ value: CBOR) -> Int? { value["off"]?.int64Value.map(Int.init) }

    @Test("the image list is MCUboot's: slot, hash, version, no flags, no splitStatus, indefinite maps")
    func listBytes() async throws {
        let device = Self.recovery()
        let factory = try #require(await device.bootloader.slots.first?.first?.data)
        let hash = try #require(try MCUbootImage(bytes: factory).hash)
        let responses = await device.handle(Self.frame(group: 1, command: 0, operation: 0))
        let expected =
            "bf66696d61676573" + "9f" + "bf64736c6f7400" + "646861736858" + "20" + TestBytes.hex(hash)
            + "6776657273696f6e65312e302e30" + "ff" + "ff" + "ff"
        #expect(responses.map { TestBytes.hex(Array($0.dropFirst(8))) } == [expected])
        #expect(responses.first.map { TestBytes.hex(Array($0.prefix(8))) } == "0100004800010700")
    }

    @Test("several images: every entry names its image; slots failing validation are left out")
    func listSeveralImages() async throws {
        let device = Self.recovery(.swapUsingMove, images: 2)
        var client = try await TestClient(device)
        // A half-written image in image 1's primary slot: not listed at all.
        let partial = Array(TestImages.image("2.0.0", image: 1).prefix(700))
        #expect(
            try await Self.answer(
                device,
                Self.upload([("off", 0), ("len", 2000), ("image", 1), ("data", .byteString(Data(partial)))])
            ).mapValue?["rc"] == 0
        )
        let list = try await client.payload(ImageManagement.StateRead(), version: .v1)
        let entries = try #require(list.mapValue?["images"]?.arrayValue)
        #expect(entries.count == 1)
        #expect(entries.first?.mapValue?.entries.map(\.key.stringValue) == ["image", "slot", "hash", "version"])
        #expect(entries.first?.mapValue?["image"] == 0)
    }

    @Test("an upload: erase at offset 0, writes cut to the flash alignment, `rc` then `off`, the last chunk padded")
    func uploadAlgorithm() async throws {
        let device = Self.recovery()
        let image = TestImages.image("2.0.0")
        let first = try await Self.answer(
            device,
            Self.upload([
                ("image", 0), ("data", .byteString(Data(image.prefix(287)))), ("len", CBOR(image.count)), ("off", 0),
                ("sha", .byteString(Data(repeating: 1, count: 32))),
            ])
        )
        #expect(first.mapValue?.entries.map(\.key.stringValue) == ["rc", "off"])
        #expect(Self.rc(first) == 0 && Self.offset(first) == 280)
        // The same chunk again: a wrong offset is answered with the expected one, nothing written.
        let stale = try await Self.answer(device, Self.upload([("off", 1), ("data", .byteString(Data([1, 2, 3])))]))
        #expect(Self.rc(stale) == 0 && Self.offset(stale) == 280)
        var offset = 280
        while offset < image.count {
            let end = min(offset + 331, image.count)
            let answer = try await Self.answer(
                device,
                Self.upload([("off", CBOR(offset)), ("data", .byteString(Data(image[offset..<end])))])
            )
            #expect(Self.rc(answer) == 0)
            let next = try #require(Self.offset(answer))
            #expect(next > offset || end == offset)
            offset = next
        }
        #expect(offset == image.count)
        let slot = await device.bootloader.slots[0][0].data
        #expect(Array(slot.prefix(image.count)) == image)
        #expect(slot.count % 8 == 0 && slot.dropFirst(image.count).allSatisfy { $0 == 0xff })
        // Overrun: past the announced length.
        let overrun = try await Self.answer(
            device,
            Self.upload([("off", CBOR(image.count)), ("data", .byteString(Data([1])))])
        )
        #expect(Self.rc(overrun) == 3)
    }

    @Test(
        "upload refusals are v1 codes",
        arguments: [
            ("no off", [("data", CBOR.byteString(Data([1]))), ("len", 10)], 3),
            ("no data", [("off", CBOR(0)), ("len", 10)], 3),
            ("no len in the first chunk", [("off", CBOR(0)), ("data", .byteString(Data([1])))], 3),
            (
                "len larger than the slot",
                [("off", CBOR(0)), ("len", CBOR(0x40001)), ("data", .byteString(Data([1])))], 3
            ),
            (
                "off of the wrong type",
                [("off", CBOR.textString("0")), ("len", 10), ("data", .byteString(Data([1])))], 3
            ),
            (
                "image beyond the image count",
                [("off", CBOR(0)), ("len", 10), ("image", 2), ("data", .byteString(Data([1])))], 5
            ),
        ] as [(String, [(String, CBOR)], Int)]
    )
    func uploadRefusals(name: String, fields: [(String, CBOR)], code: Int) async throws {
        let answer = try await Self.answer(Self.recovery(), Self.upload(fields))
        #expect(answer == .map(["rc": CBOR(code)]), "\(name)")
    }

    @Test(
        "image 1 on a single-image build lands in the primary slot (MCUboot's off-by-one); with several images it does not open"
    )
    func imageEqualToCount() async throws {
        let single = Self.recovery()
        #expect(
            Self.rc(
                try await Self.answer(
                    single,
                    Self.upload([
                        ("off", 0), ("len", 100), ("image", 1), ("data", .byteString(Data(repeating: 7, count: 16))),
                    ])
                )
            ) == 0
        )
        #expect(await single.bootloader.slots[0][0].data.prefix(16) == Array(repeating: 7, count: 16)[...])
        let two = Self.recovery(.swapUsingMove, images: 2)
        #expect(
            Self.rc(
                try await Self.answer(
                    two,
                    Self.upload([("off", 0), ("len", 100), ("image", 2), ("data", .byteString(Data([7])))])
                )
            ) == 3
        )
    }

    @Test(
        "direct upload: `image` names a slot",
        arguments: [(0, 0, 0), (1, 0, 0), (2, 0, 1), (3, 1, 0), (4, 1, 1)] as [(Int, Int, Int)]
    )
    func directUpload(id: Int, image: Int, slot: Int) async throws {
        let device = Self.recovery(.swapUsingMove, images: 2, options: .init(directImageUpload: true))
        let answer = try await Self.answer(
            device,
            Self.upload([
                ("off", 0), ("len", 8), ("image", CBOR(id)), ("data", .byteString(Data(repeating: 9, count: 8))),
            ])
        )
        #expect(Self.rc(answer) == 0 && Self.offset(answer) == 8)
        #expect(await device.bootloader.slots[image][slot].data == Array(repeating: 9, count: 8))
        let beyond = try await Self.answer(
            device,
            Self.upload([("off", 0), ("len", 8), ("image", 5), ("data", .byteString(Data([9])))])
        )
        #expect(Self.rc(beyond) == 3)
    }

    @Test(
        "commands serial recovery does not have are rc 8, whatever the SMP version",
        arguments: [
            ("image erase", 1 as UInt16, 5 as UInt8, 2 as UInt8),
            ("image state write", 1, 0, 2),
            ("slot info", 1, 6, 0),
            ("bootloader info", 0, 8, 0),
            ("task statistics", 0, 2, 0),
            ("echo (not built in)", 0, 0, 2),
            ("MCUmgr parameters (not built in)", 0, 6, 0),
            ("storage erase (not built in)", 63, 0, 2),
            ("statistics", 2, 0, 0),
        ]
    )
    func unsupported(name: String, group: UInt16, command: UInt8, operation: UInt8) async throws {
        for version: UInt8 in [0, 1] {
            let answer = try await Self.answer(
                Self.recovery(),
                Self.frame(group: group, command: command, operation: operation, version: version)
            )
            #expect(answer == .map(["rc": 8]), "\(name), v\(version + 1)")
        }
    }

    @Test("echo, parameters and storage erase when built in; console echo control is always rc 0")
    func optionalCommands() async throws {
        let device = Self.recovery(options: .init(echo: true, mcumgrParameters: true, storageErase: true))
        #expect(try await Self.answer(device, Self.frame(group: 0, command: 0, .map(["d": "hi"]))) == .map(["r": "hi"]))
        #expect(try await Self.answer(device, Self.frame(group: 0, command: 0, .map(["d": 5]))) == .map(["rc": 3]))
        #expect(
            try await Self.answer(device, Self.frame(group: 0, command: 6, operation: 0))
                == .map(["buf_size": 1024, "buf_count": 1])
        )
        #expect(try await Self.answer(device, Self.frame(group: 63, command: 0)) == .map(["rc": 0]))
        #expect(
            try await Self.answer(Self.recovery(), Self.frame(group: 0, command: 1, .map(["echo": 0])))
                == .map(["rc": 0])
        )
    }

    @Test(
        "frames MCUboot drops without an answer",
        arguments: [
            ("a response", frame(group: 1, command: 0, operation: 1)),
            ("a write response", frame(group: 0, command: 5, operation: 3)),
            ("shorter than a header", Array(frame(group: 1, command: 0, operation: 0).prefix(7))),
            ("a header announcing less than arrived", [0, 0, 0, 0, 0, 1, 7, 0, 0xa0]),
            (
                "larger than the receive buffer",
                frame(group: 0, command: 1, .map(["d": .textString(String(repeating: "x", count: 1100))]))
            ),
        ]
    )
    func dropped(name: String, bytes: [UInt8]) async {
        #expect(await Self.recovery().handle(bytes).isEmpty, "\(name)")
    }

    @Test("a header announcing more than arrived is still answered (MCUboot checks only the other way)")
    func longerLength() async throws {
        var request = Self.frame(group: 1, command: 0, operation: 0)
        request[3] = 9
        let responses = await Self.recovery().handle(request)
        #expect(responses.count == 1)
    }

    @Test("reset ignores its payload, even none at all, answers rc 0 and reboots into the application")
    func reset() async throws {
        let device = Self.recovery()
        #expect(await device.stage == .serialRecovery)
        #expect(try await Self.answer(device, Self.frame(group: 0, command: 5, nil)) == .map(["rc": 0]))
        await device.waitUntilAnswering()
        #expect(await device.stage == .application)
    }

    @Test("one receive buffer: a request sent while another is handled is lost")
    func oneBuffer() async throws {
        let device = SimulatedDevice(
            configuration: .init(
                requestProcessingTime: .milliseconds(50),
                bootloaderMode: .singleSlot,
                startsInRecovery: true
            )
        )
        let connection = try await LoopbackTransport(device: device).connect()
        let collector = FrameCollector(connection.frames)
        let list = Self.frame(group: 1, command: 0, operation: 0)
        try await connection.send(list)
        try await connection.send(list)
        #expect(await collector.next(timeout: .seconds(10)) != nil)
        #expect(await collector.next(timeout: .milliseconds(300)) == nil)
        #expect(await device.requestsDroppedForBuffers == 1)
    }
}

/// A serial-recovery client we did not write drives the simulator's recovery over the pty.
@Suite("SerialRecoveryServer with mcumgr-client")
struct SerialRecoveryPeerTests {
    @Test(
        "mcumgr-client (Rust, via mcumgr-client-wrapper) lists, uploads and resets over the pty; MCUboot then boots the image",
        Peers.needed("mcumgr_client", "imgtool"),
        // A hang guard only (each peer process is killed after Peers.processTimeout).
        .timeLimit(.minutes(30))
    )
    func mcumgrClient() async throws {
        let images = try await ImgtoolImages()
        defer { images.remove() }
        let signed = try await images.make(version: "1.3.0", size: 9_000)
        let signedHash = try #require(try MCUbootImage(bytes: Array(Data(contentsOf: signed))).hash)
        let key = try ImagePublicKey(keyFile: Data(contentsOf: images.key))
        let device = SimulatedDevice(
            configuration: .init(bootloaderMode: .singleSlot, signingKey: key, startsInRecovery: true)
        )
        let server = try SimulatedSerialServer(device: device, framing: .console, baudRate: 115_200)
        server.start()
        // The peer's timeout after the first answer is 200 ms by default: beside stress-ng and
        // the suite an answer came later, the peer sent again and took the late answer for the
        // next one ("wrong answer types"). Nothing is lost here: a timeout the load cannot reach.
        let script = """
            import sys, json, mcumgr_client as m
            s = m.SerialSession(sys.argv[1], 115200, initial_timeout_s=10, subsequent_timeout_ms=10000)
            def show(entries):
                return [{k: (bytes(v).hex() if k == "hash" else v) for k, v in e.items()} for e in entries]
            print(json.dumps({"before": show(s.list())}))
            s.upload(sys.argv[2], 0)
            print(json.dumps({"after": show(s.list())}))
            s.reset()
            print("RESET")
            """
        let output = try await Peers.python(script, [server.slavePath, signed.path])
        await device.waitUntilAnswering()
        await server.stop()
        let lines = String(decoding: output, as: UTF8.self).split(separator: "\n").map(String.init)
        try #require(lines.count == 3, "\(lines)")
        let before = try #require(
            try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: [[String: Any]]]
        )
        let after = try #require(
            try JSONSerialization.jsonObject(with: Data(lines[1].utf8)) as? [String: [[String: Any]]]
        )
        #expect(before["before"]?.map { $0["version"] as? String } == ["1.0.0"])
        #expect(after["after"]?.map { $0["version"] as? String } == ["1.3.0"])
        #expect(after["after"]?.first?["hash"] as? String == TestBytes.hex(signedHash))
        #expect(lines[2] == "RESET")
        // MCUboot validated the signature at the boot and runs the image.
        #expect(await device.stage == .application)
        let running = await device.imageStates.first { $0.isActive }
        #expect(running?.version == "1.3.0")
        #expect(running?.hash.map(Array.init) == signedHash)
    }
}
