import SMPHCI
import Testing

/// Random bytes into every parser of controller input: each returns or throws an `HCIError`,
/// none traps. (A stand-in until the module has a libFuzzer target of its own.)
struct RandomInputTests {
    static func randomBytes(_ generator: inout SplitMix64, maximum: Int) -> [UInt8] {
        (0..<Int(generator.next() % UInt64(maximum + 1))).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
    }

    @Test(arguments: 0..<20)
    func parsersNeverTrap(seed: UInt64) throws {
        var generator = SplitMix64(seed: seed)
        for _ in 0..<500 {
            let bytes = Self.randomBytes(&generator, maximum: 64)
            // The event code and subevent are forced to the parsed ones half the time.
            var parameters = bytes
            let codes: [UInt8] = [0x05, 0x0E, 0x0F, 0x13, 0x3E]
            let code = codes[Int(generator.next() % UInt64(codes.count))]
            if code == 0x3E, !parameters.isEmpty {
                parameters[0] = [0x01, 0x02, 0x03, 0x0A, 0x0D][Int(generator.next() % 5)]
            }
            _ = try? HCIEvent(
                HCIEventPacket(code: HCIEventCode(rawValue: code), parameters: Array(parameters.prefix(255)))
            )
            _ = try? HCIEventPacket(bytes: bytes)
            _ = try? HCICommandPacket(bytes: bytes)
            _ = try? HCIACLDataPacket(bytes: bytes)
            _ = try? AdvertisingData(bytes: bytes)
            _ = try? L2CAPPDU(bytes: bytes)
            _ = LESignalling.answer(bytes)
            for opcode in [HCIOpcode.readLocalVersionInformation, .readBDADDR, .leReadBufferSizeV2, .readBufferSize] {
                let complete = HCI.CommandComplete(numHCICommandPackets: 1, opcode: opcode, returnParameters: bytes)
                _ = try? complete.returnParameters(of: HCI.ReadLocalVersionInformation.self)
                _ = try? complete.returnParameters(of: HCI.ReadBDADDR.self)
                _ = try? complete.returnParameters(of: HCI.LEReadBufferSizeV2.self)
                _ = try? complete.returnParameters(of: HCI.ReadBufferSize.self)
            }
        }
    }

    @Test(arguments: 0..<10)
    func theH4DecoderAndReassemblerNeverTrap(seed: UInt64) {
        var generator = SplitMix64(seed: seed)
        var decoder = H4Decoder(maximumACLDataLength: 600)
        var reassembler = L2CAPReassembler(maximumPayloadLength: 600)
        for _ in 0..<300 {
            // Mostly valid indicators, so the decoder gets past the first byte.
            var chunk = Self.randomBytes(&generator, maximum: 40)
            if !chunk.isEmpty, generator.next() % 4 != 0 { chunk[0] = [0x02, 0x04][Int(generator.next() % 2)] }
            decoder.append(chunk)
            do {
                while let packet = try decoder.next() {
                    if case .acl(let acl) = packet { _ = try? reassembler.receive(acl) }
                }
            } catch {
                decoder = H4Decoder(maximumACLDataLength: 600)
            }
        }
    }

    /// The setup at each of its steps, driven against our server: fresh, and after every answer.
    static func setupsAtEveryStep() -> [GATTClientSetup] {
        var setup = GATTClientSetup()
        var server = GATTServer(deviceName: "sim")
        var snapshots = [setup]
        var action = setup.start()
        while case .send(let pdus, _) = action, let request = pdus.last, let reply = server.receive(request).reply {
            snapshots.append(setup)
            action = setup.receive(reply)
        }
        return snapshots
    }

    @Test(arguments: 0..<10)
    func attParsersAndMachinesNeverTrap(seed: UInt64) throws {
        var generator = SplitMix64(seed: seed)
        let setups = Self.setupsAtEveryStep()
        #expect(setups.count == 7)
        let opcodes: [UInt8] =
            [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x10, 0x11]
            + [0x12, 0x13, 0x1B, 0x1D, 0x1E, 0x52]
        for _ in 0..<300 {
            var bytes = Self.randomBytes(&generator, maximum: 40)
            // A known opcode most of the time, so the parsers get past the first byte.
            if !bytes.isEmpty, generator.next() % 4 != 0 {
                bytes[0] = opcodes[Int(generator.next() % UInt64(opcodes.count))]
            }
            _ = try? ATTPDU(bytes: bytes)
            var server = GATTServer(deviceName: "sim")
            let output = server.receive(bytes)
            if let reply = output.reply { _ = try ATTPDU(bytes: reply) }
            var setup = setups[Int(generator.next() % UInt64(setups.count))]
            if case .send(let pdus, _) = setup.receive(bytes) { for pdu in pdus { _ = try ATTPDU(bytes: pdu) } }
            var channel = GATTClientChannel(mtu: 23 + Int(generator.next() % 500), valueHandle: 7, cccdHandle: 8)
            if let reply = (try? channel.receive(bytes))?.reply { _ = try ATTPDU(bytes: reply) }
            _ = try? channel.writeCommand(bytes)
        }
    }
}
