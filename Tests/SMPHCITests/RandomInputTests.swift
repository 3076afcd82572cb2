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
}
