import SMPHCI
import Testing

struct ControllerBringUpTests {
    /// Answers each command as Bumble's controller did (its recorded Command Complete events),
    /// with `override` taking precedence.
    static func bumbleAnswer(
        to command: HCICommandPacket,
        override: [HCIOpcode: HCIEvent] = [:]
    ) throws -> HCIEvent {
        if let event = override[command.opcode] { return event }
        let answers: [HCIOpcode: String] = [
            .reset: BumbleVectors.controllerAnswerReset,
            .readLocalVersionInformation: BumbleVectors.controllerAnswerReadLocalVersion,
            .readLocalSupportedCommands: BumbleVectors.controllerAnswerReadLocalSupportedCommands,
            .readBDADDR: BumbleVectors.controllerAnswerReadBDADDR,
            .setEventMask: BumbleVectors.controllerAnswerSetEventMask,
            .leSetEventMask: BumbleVectors.controllerAnswerLESetEventMask,
            .leReadBufferSizeV2: BumbleVectors.controllerAnswerLEReadBufferSizeV2,
            .leReadBufferSize: BumbleVectors.controllerAnswerLEReadBufferSize,
            .readBufferSize: BumbleVectors.controllerAnswerReadBufferSize,
        ]
        let hex = try #require(answers[command.opcode], "no answer for \(command.opcode)")
        return try h4Event(hex)
    }

    /// Runs a bring-up to its end: the opcodes sent, and the last action.
    static func run(
        _ machine: inout ControllerBringUp,
        override: [HCIOpcode: HCIEvent] = [:]
    ) throws -> (sent: [HCIOpcode], end: ControllerBringUp.Action) {
        var sent: [HCIOpcode] = []
        var action = machine.start()
        while case .send(let command) = action {
            sent.append(command.opcode)
            action = machine.receive(try bumbleAnswer(to: command, override: override))
            #expect(sent.count < 20, "the bring-up does not end")
        }
        return (sent, action)
    }

    @Test func bringsUpBumblesController() throws {
        var machine = ControllerBringUp()
        let (sent, end) = try Self.run(&machine)
        #expect(
            sent == [
                .reset, .readLocalVersionInformation, .readLocalSupportedCommands, .readBDADDR, .setEventMask,
                .leSetEventMask, .leReadBufferSizeV2,
            ]
        )
        guard case .finished(let info) = end else {
            Issue.record("not finished: \(end)")
            return
        }
        #expect(info.version.hciVersion == 0x09)
        #expect(info.version.companyIdentifier == 0xFFFF)
        #expect(info.publicAddress.description == "F0:F1:F2:F3:F4:F5")
        #expect(info.aclDataPacketLength == 27)
        #expect(info.aclDataPacketCount == 64)
        #expect(!info.aclBuffersAreShared)
        #expect(!info.supportsExtendedScanning)
        #expect(info.randomAddress == nil)
    }

    @Test func withoutV2InTheBitmapReadsV1() throws {
        let noCommands = HCIEvent.commandComplete(
            .init(
                numHCICommandPackets: 1,
                command: HCI.ReadLocalSupportedCommands.self,
                returnParameters: .init(
                    supportedCommands: HCISupportedCommands(bytes: [UInt8](repeating: 0, count: 64))!
                )
            )
        )
        var machine = ControllerBringUp()
        let (sent, end) = try Self.run(&machine, override: [.readLocalSupportedCommands: noCommands])
        #expect(sent.last == .leReadBufferSize)
        guard case .finished(let info) = end else {
            Issue.record("not finished: \(end)")
            return
        }
        #expect(!info.supportsExtendedScanning)
        #expect(info.aclDataPacketLength == 27)
    }

    @Test func aV2RefusedAsUnknownFallsBackToV1() throws {
        var machine = ControllerBringUp()
        let (sent, end) = try Self.run(
            &machine,
            override: [.leReadBufferSizeV2: try h4Event(BumbleVectors.commandCompleteUnknownCommand)]
        )
        #expect(sent.suffix(2) == [.leReadBufferSizeV2, .leReadBufferSize])
        guard case .finished = end else {
            Issue.record("not finished: \(end)")
            return
        }
    }

    /// LE Read Buffer Size v2 reporting no LE buffers of its own.
    static let zeroV2 = HCIEvent.commandComplete(
        .init(
            numHCICommandPackets: 1,
            command: HCI.LEReadBufferSizeV2.self,
            returnParameters: .init(
                leACLDataPacketLength: 0,
                totalNumLEACLDataPackets: 0,
                isoDataPacketLength: 0,
                totalNumISODataPackets: 0
            )
        )
    )

    @Test func noLEBuffersMeansTheSharedOnes() throws {
        var machine = ControllerBringUp()
        let zero = Self.zeroV2
        let sharedBuffers = HCIEvent.commandComplete(
            .init(
                numHCICommandPackets: 1,
                command: HCI.ReadBufferSize.self,
                returnParameters: .init(
                    aclDataPacketLength: 251,
                    synchronousDataPacketLength: 0,
                    totalNumACLDataPackets: 8,
                    totalNumSynchronousDataPackets: 0
                )
            )
        )
        let (sent, end) = try Self.run(&machine, override: [.leReadBufferSizeV2: zero, .readBufferSize: sharedBuffers])
        #expect(sent.suffix(2) == [.leReadBufferSizeV2, .readBufferSize])
        guard case .finished(let info) = end else {
            Issue.record("not finished: \(end)")
            return
        }
        #expect(info.aclDataPacketLength == 251)
        #expect(info.aclDataPacketCount == 8)
        #expect(info.aclBuffersAreShared)
    }

    @Test func noBuffersAtAllIsAFailure() throws {
        var machine = ControllerBringUp()
        let zero = Self.zeroV2
        let none = HCIEvent.commandComplete(
            .init(
                numHCICommandPackets: 1,
                command: HCI.ReadBufferSize.self,
                returnParameters: .init(
                    aclDataPacketLength: 0,
                    synchronousDataPacketLength: 0,
                    totalNumACLDataPackets: 0,
                    totalNumSynchronousDataPackets: 0
                )
            )
        )
        let (_, end) = try Self.run(&machine, override: [.leReadBufferSizeV2: zero, .readBufferSize: none])
        #expect(end == .failed(HCIError(.protocolViolation)))
    }

    @Test func setsTheRandomAddressWhenAskedAndReportsIt() throws {
        let address = try #require(BluetoothAddress("C0:11:22:33:44:55"))
        var machine = ControllerBringUp(randomAddress: address)
        let setRandom = HCIEvent.commandComplete(
            .init(numHCICommandPackets: 1, command: HCI.LESetRandomAddress.self, returnParameters: .init())
        )
        var sentPackets: [HCICommandPacket] = []
        var action = machine.start()
        while case .send(let command) = action {
            sentPackets.append(command)
            action = machine.receive(try Self.bumbleAnswer(to: command, override: [.leSetRandomAddress: setRandom]))
        }
        #expect(
            sentPackets.last.map { H4Encoder.encode(.command($0)) } == (try bytes(BumbleVectors.leSetRandomAddress))
        )
        guard case .finished(let info) = action else {
            Issue.record("not finished: \(action)")
            return
        }
        #expect(info.randomAddress == address)
    }

    @Test func aRefusedCommandFailsWithItsStatus() throws {
        var machine = ControllerBringUp()
        let failedReset = HCIEvent.commandComplete(
            .init(numHCICommandPackets: 1, opcode: .reset, returnParameters: [HCIStatus.hardwareFailure.rawValue])
        )
        let (sent, end) = try Self.run(&machine, override: [.reset: failedReset])
        #expect(sent == [.reset])
        guard case .failed(let error) = end else {
            Issue.record("not failed: \(end)")
            return
        }
        #expect(error.code == .commandFailed)
        #expect(error.status == .hardwareFailure)
    }

    @Test func aCommandStatusRefusalFailsWithItsStatus() throws {
        var machine = ControllerBringUp()
        let refusal = HCIEvent.commandStatus(
            .init(status: .unknownCommand, numHCICommandPackets: 1, opcode: .readBDADDR)
        )
        let (_, end) = try Self.run(&machine, override: [.readBDADDR: refusal])
        guard case .failed(let error) = end else {
            Issue.record("not failed: \(end)")
            return
        }
        #expect(error.status == .unknownCommand)
    }

    @Test func waitsForACreditBeforeTheNextCommand() throws {
        var machine = ControllerBringUp()
        guard case .send(let reset) = machine.start() else {
            Issue.record("Reset not sent")
            return
        }
        #expect(reset.opcode == .reset)
        // Reset answered, but no credit for another command yet.
        let answered = machine.receive(
            .commandComplete(.init(numHCICommandPackets: 0, command: HCI.Reset.self, returnParameters: .init()))
        )
        #expect(answered == .wait)
        // An advertising report changes nothing.
        #expect(machine.receive(try h4Event(BumbleVectors.leAdvertisingReport)) == .wait)
        // A no-operation Command Complete grants the credit.
        let credit = machine.receive(
            .commandComplete(.init(numHCICommandPackets: 1, opcode: .noOperation, returnParameters: []))
        )
        #expect(credit == .send(HCICommandPacket(HCI.ReadLocalVersionInformation())))
    }

    @Test func ignoresAnswersToCommandsItDidNotSend() throws {
        var machine = ControllerBringUp()
        _ = machine.start()
        // A previous host's LE Create Connection, answered after our Reset went out.
        let stale = machine.receive(try h4Event(BumbleVectors.commandStatusPending))
        #expect(stale == .wait)
        let next = machine.receive(try h4Event(BumbleVectors.controllerAnswerReset))
        #expect(next == .send(HCICommandPacket(HCI.ReadLocalVersionInformation())))
    }

    @Test func aMissingAnswerFailsWhenTheWaitRunsOut() {
        var machine = ControllerBringUp()
        _ = machine.start()
        #expect(machine.timedOut() == .failed(HCIError(.timeout)))
        // Once failed, events change nothing.
        #expect(
            machine.receive(.disconnectionComplete(.init(connectionHandle: 1, reason: .connectionTimeout))) == .wait
        )
    }
}
