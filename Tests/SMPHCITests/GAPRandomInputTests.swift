import SMPHCI
import Testing

/// Random event sequences and random calls into every GAP machine: each action is one the
/// machine may give (failures carry an `HCIError`), none traps, and a machine that failed or
/// finished stays quiet.
struct GAPRandomInputTests {
    /// A random event: mostly answers to the machines' own opcodes and their connection events,
    /// with random statuses and peers, and some random bytes parsed as any event.
    static func randomEvent(_ generator: inout SplitMix64) -> HCIEvent? {
        let opcodes: [HCIOpcode] = [
            .leSetScanParameters, .leSetScanEnable, .leSetExtendedScanParameters, .leSetExtendedScanEnable,
            .leCreateConnection, .leCreateConnectionCancel, .leSetAdvertisingParameters, .leSetAdvertisingData,
            .leSetScanResponseData, .leSetAdvertisingEnable, .leSetDataLength, .reset,
        ]
        let opcode = opcodes[Int(generator.next() % UInt64(opcodes.count))]
        let status = HCIStatus(rawValue: [0x00, 0x00, 0x01, 0x02, 0x0C, 0x3E][Int(generator.next() % 6)])
        let peer = [GAP.advertiser, GAP.absent, .zero][Int(generator.next() % 3)]
        let role: HCIRole = generator.next() % 2 == 0 ? .central : .peripheral
        switch generator.next() % 6 {
        case 0:
            let extra = RandomInputTests.randomBytes(&generator, maximum: 4)
            return .commandComplete(
                .init(numHCICommandPackets: 1, opcode: opcode, returnParameters: [status.rawValue] + extra)
            )
        case 1: return GAP.status(opcode, status)
        case 2: return GAP.connectionComplete(status, role: role, peer: peer)
        case 3:
            return GAP.rawReport(
                .init(rawValue: UInt8(generator.next() % 5)),
                from: peer,
                RandomInputTests.randomBytes(&generator, maximum: 31)
            )
        default:
            let bytes = RandomInputTests.randomBytes(&generator, maximum: 48)
            let code: UInt8 = [0x0E, 0x0F, 0x3E][Int(generator.next() % 3)]
            var parameters = bytes
            if code == 0x3E, !parameters.isEmpty {
                parameters[0] = [0x01, 0x02, 0x07, 0x0A, 0x0D][Int(generator.next() % 5)]
            }
            return try? HCIEvent(HCIEventPacket(code: HCIEventCode(rawValue: code), parameters: parameters))
        }
    }

    @Test(arguments: 0..<10)
    func scannerNeverTraps(seed: UInt64) throws {
        var generator = SplitMix64(seed: seed)
        var scanner = LEScanner(controller: try GAP.controller(extended: seed % 2 == 0))
        var ended = false
        for step in 0..<400 {
            let action: LEScanner.Action
            switch generator.next() % 20 {
            case 0: action = scanner.start()
            case 1: action = scanner.stop()
            case 2: action = scanner.timedOut()
            default: action = Self.randomEvent(&generator).map { scanner.receive($0) } ?? .wait
            }
            if ended { #expect(action == .wait, "step \(step): \(action) after the end") }
            if case .failed = action { ended = true }
        }
    }

    @Test(arguments: 0..<10)
    func connectorNeverTrapsAndConnectsOnlyToItsPeerAsCentral(seed: UInt64) throws {
        var generator = SplitMix64(seed: seed)
        var connector = LEConnector(peer: GAP.advertiser, peerType: .randomDevice, controller: try GAP.controller())
        var ended = false
        for step in 0..<400 {
            let action: LEConnector.Action
            switch generator.next() % 20 {
            case 0: action = connector.start()
            case 1: action = connector.timedOut()
            default: action = Self.randomEvent(&generator).map { connector.receive($0) } ?? .wait
            }
            if ended { #expect(action == .wait, "step \(step): \(action) after the end") }
            switch action {
            case .connected(let connection):
                #expect(connection.role == .central && connection.peerAddress == GAP.advertiser)
                ended = true
            case .failed: ended = true
            case .send, .wait: break
            }
        }
    }

    @Test(arguments: 0..<10)
    func advertiserNeverTrapsAndConnectsOnlyAsPeripheral(seed: UInt64) throws {
        var generator = SplitMix64(seed: seed)
        var advertiser = try LEAdvertiser(name: "fuzz", service: GAP.smpService, controller: try GAP.controller())
        var failed = false
        for step in 0..<400 {
            let action: LEAdvertiser.Action
            switch generator.next() % 20 {
            case 0: action = advertiser.start()
            case 1: action = advertiser.stop()
            case 2: action = advertiser.restart()
            case 3: action = advertiser.timedOut()
            default: action = Self.randomEvent(&generator).map { advertiser.receive($0) } ?? .wait
            }
            if failed { #expect(action == .wait, "step \(step): \(action) after failing") }
            if case .connected(let connection) = action { #expect(connection.role == .peripheral) }
            if case .failed = action { failed = true }
        }
    }

    @Test(arguments: 0..<10)
    func linkTuningNeverTrapsAndFinishesOnce(seed: UInt64) {
        var generator = SplitMix64(seed: seed)
        var tuning = LinkTuning(connectionHandle: 0x0040)
        var finished = 0
        for _ in 0..<400 {
            let action: LinkTuning.Action
            switch generator.next() % 20 {
            case 0: action = tuning.start()
            case 1: action = tuning.timedOut()
            default: action = Self.randomEvent(&generator).map { tuning.receive($0) } ?? .wait
            }
            if case .finished = action { finished += 1 }
        }
        #expect(finished <= 1)
    }
}
