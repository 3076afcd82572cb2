import SMPBytes
import SMPHCI
import Testing

struct HCIBringupTests {
    static let commands: [GoldenCommand] = [
        GoldenCommand(BumbleVectors.reset, HCI.Reset()),
        GoldenCommand(BumbleVectors.readLocalVersion, HCI.ReadLocalVersionInformation()),
        GoldenCommand(BumbleVectors.readLocalSupportedCommands, HCI.ReadLocalSupportedCommands()),
        GoldenCommand(BumbleVectors.readBDADDR, HCI.ReadBDADDR()),
        GoldenCommand(BumbleVectors.readBufferSize, HCI.ReadBufferSize()),
        GoldenCommand(BumbleVectors.leReadBufferSize, HCI.LEReadBufferSize()),
        GoldenCommand(BumbleVectors.leReadBufferSizeV2, HCI.LEReadBufferSizeV2()),
        GoldenCommand(BumbleVectors.setEventMask, HCI.SetEventMask.leCentral),
        GoldenCommand(BumbleVectors.leSetEventMask, HCI.LESetEventMask.leCentral),
        GoldenCommand(
            BumbleVectors.leSetRandomAddress,
            HCI.LESetRandomAddress(address: BluetoothAddress("C0:11:22:33:44:55")!)
        ),
    ]

    @Test(arguments: commands)
    func encodesToBumblesBytesAndParsesThemBack(command: GoldenCommand) throws {
        let bytes = try bytes(command.hex)
        #expect(H4Encoder.encode(.command(command.packet)) == bytes)
        guard case .command(let packet) = try h4Packet(command.hex) else {
            Issue.record("not a command")
            return
        }
        #expect(packet == command.packet)
        #expect(try command.parsesBack(packet))
    }

    @Test func aMaskHasOneBitPerEventCodeMinusOne() {
        #expect(HCI.SetEventMask(eventCodes: [0x01]).mask == 1)
        #expect(HCI.SetEventMask(eventCodes: [0x3E]).mask == 1 << 61)
        #expect(HCI.LESetEventMask(subeventCodes: [0x0D]).mask == 1 << 12)
    }

    /// The answers of Bumble's own controller to the bring-up commands.
    @Test func readsTheReturnParametersOfBumblesController() throws {
        func complete(_ hex: String) throws -> HCI.CommandComplete {
            guard case .commandComplete(let event) = try h4Event(hex) else { throw HCIError(.malformedPacket) }
            #expect(event.numHCICommandPackets == 1)
            #expect(event.status == .success)
            return event
        }
        _ = try complete(BumbleVectors.controllerAnswerReset).returnParameters(of: HCI.Reset.self)
        let version = try complete(BumbleVectors.controllerAnswerReadLocalVersion)
            .returnParameters(of: HCI.ReadLocalVersionInformation.self)
        #expect(
            version
                == .init(
                    hciVersion: 0x09,
                    hciSubversion: 0,
                    lmpVersion: 0x09,
                    companyIdentifier: 0xFFFF,
                    lmpSubversion: 0
                )
        )
        let address = try complete(BumbleVectors.controllerAnswerReadBDADDR).returnParameters(of: HCI.ReadBDADDR.self)
        #expect(address.address.description == "F0:F1:F2:F3:F4:F5")
        let le = try complete(BumbleVectors.controllerAnswerLEReadBufferSize)
            .returnParameters(of: HCI.LEReadBufferSize.self)
        #expect(le == .init(leACLDataPacketLength: 27, totalNumLEACLDataPackets: 64))
        let leV2 = try complete(BumbleVectors.controllerAnswerLEReadBufferSizeV2)
            .returnParameters(of: HCI.LEReadBufferSizeV2.self)
        #expect(
            leV2
                == .init(
                    leACLDataPacketLength: 27,
                    totalNumLEACLDataPackets: 64,
                    isoDataPacketLength: 960,
                    totalNumISODataPackets: 64
                )
        )
        let buffers = try complete(BumbleVectors.controllerAnswerReadBufferSize)
            .returnParameters(of: HCI.ReadBufferSize.self)
        #expect(
            buffers
                == .init(
                    aclDataPacketLength: 27,
                    synchronousDataPacketLength: 0,
                    totalNumACLDataPackets: 64,
                    totalNumSynchronousDataPackets: 0
                )
        )
        let supported = try complete(BumbleVectors.controllerAnswerReadLocalSupportedCommands)
            .returnParameters(of: HCI.ReadLocalSupportedCommands.self).supportedCommands
        #expect(supported.leReadBufferSizeV2)
        // Bumble's controller scans the legacy way only: its bitmap leaves the extended scanning
        // commands out (and it has no handler for them).
        #expect(!supported.extendedScanning)
        #expect(supported.contains(octet: 26, bit: 2))  // LE Set Scan Parameters
        #expect(supported.contains(octet: 26, bit: 3))  // LE Set Scan Enable
    }

    /// Writing the return parameters back gives Bumble's events byte for byte.
    @Test func writesBumblesAnswersBack() throws {
        let answers: [(String, HCI.CommandComplete)] = [
            (
                BumbleVectors.controllerAnswerReset,
                HCI.CommandComplete(numHCICommandPackets: 1, command: HCI.Reset.self, returnParameters: .init())
            ),
            (
                BumbleVectors.controllerAnswerReadBDADDR,
                HCI.CommandComplete(
                    numHCICommandPackets: 1,
                    command: HCI.ReadBDADDR.self,
                    returnParameters: .init(address: BluetoothAddress("F0:F1:F2:F3:F4:F5")!)
                )
            ),
            (
                BumbleVectors.controllerAnswerLEReadBufferSize,
                HCI.CommandComplete(
                    numHCICommandPackets: 1,
                    command: HCI.LEReadBufferSize.self,
                    returnParameters: .init(leACLDataPacketLength: 27, totalNumLEACLDataPackets: 64)
                )
            ),
        ]
        for (hex, event) in answers {
            #expect(H4Encoder.encode(.event(event.packet)) == (try bytes(hex)))
        }
    }

    @Test func aFailedCommandIsAnErrorWithItsStatusEvenWithoutItsFields() throws {
        guard case .commandComplete(let event) = try h4Event(BumbleVectors.commandCompleteUnknownCommand) else {
            Issue.record("not a Command Complete")
            return
        }
        #expect(event.returnParameters == [0x01])
        #expect {
            try event.returnParameters(of: HCI.LEReadBufferSizeV2.self)
        } throws: { error in
            (error as? HCIError)?.status == .unknownCommand && (error as? HCIError)?.code == .commandFailed
        }
    }

    @Test func anAnswerToAnotherCommandIsAProtocolViolation() throws {
        guard case .commandComplete(let event) = try h4Event(BumbleVectors.controllerAnswerReset) else {
            Issue.record("not a Command Complete")
            return
        }
        #expect(throws: HCIError(.protocolViolation)) { try event.returnParameters(of: HCI.ReadBDADDR.self) }
    }

    @Test func successfulReturnParametersTooShortAreMalformed() {
        let event = HCI.CommandComplete(numHCICommandPackets: 1, opcode: .readBDADDR, returnParameters: [0, 1, 2, 3])
        #expect(throws: HCIError(.malformedPacket)) { try event.returnParameters(of: HCI.ReadBDADDR.self) }
        let empty = HCI.CommandComplete(numHCICommandPackets: 1, opcode: .reset, returnParameters: [])
        #expect(throws: HCIError(.malformedPacket)) { try empty.returnParameters(of: HCI.Reset.self) }
    }
}
