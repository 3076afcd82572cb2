import SMPHCI
import Testing

struct HCIEventsTests {
    /// Events Bumble built, the events they are, both ways.
    static let events: [(String, HCIEvent)] = [
        (
            BumbleVectors.commandStatusPending,
            .commandStatus(.init(status: .success, numHCICommandPackets: 1, opcode: .leCreateConnection))
        ),
        (
            BumbleVectors.commandStatusDisallowed,
            .commandStatus(.init(status: .commandDisallowed, numHCICommandPackets: 0, opcode: .disconnect))
        ),
        (
            BumbleVectors.disconnectionCompleteRemoteUser,
            .disconnectionComplete(.init(connectionHandle: 0x0040, reason: .remoteUserTerminatedConnection))
        ),
        (
            BumbleVectors.disconnectionCompleteTimeout,
            .disconnectionComplete(.init(connectionHandle: 0x0001, reason: .connectionTimeout))
        ),
        (
            BumbleVectors.numberOfCompletedPackets,
            .numberOfCompletedPackets(
                .init(completed: [.init(connectionHandle: 0x0040, count: 3), .init(connectionHandle: 0x0041, count: 1)])
            )
        ),
        (
            BumbleVectors.commandCompleteLEReadBufferSizeZero,
            .commandComplete(
                .init(
                    numHCICommandPackets: 1,
                    command: HCI.LEReadBufferSize.self,
                    returnParameters: .init(leACLDataPacketLength: 0, totalNumLEACLDataPackets: 0)
                )
            )
        ),
    ]

    @Test(arguments: events)
    func parsesBumblesEventsAndWritesThemBack(hex: String, event: HCIEvent) throws {
        #expect(try h4Event(hex) == event)
        #expect(H4Encoder.encode(.event(event.packet)) == (try bytes(hex)))
    }

    @Test(arguments: [
        (HCIEventCode.commandComplete, [UInt8]([0x01, 0x03])),
        (.commandStatus, [0x00, 0x01, 0x03]),
        (.disconnectionComplete, [0x00, 0x40, 0x00]),
        // Two entries announced, one and a half present.
        (.numberOfCompletedPackets, [0x02, 0x40, 0x00, 0x01, 0x00, 0x41]),
    ])
    func truncatedEventsAreMalformed(code: HCIEventCode, parameters: [UInt8]) {
        #expect(throws: HCIError(.malformedPacket)) {
            try HCIEvent(HCIEventPacket(code: code, parameters: parameters))
        }
    }

    @Test func bytesAfterTheKnownFieldsAreIgnored() throws {
        // A later version of the specification may append parameters.
        let event = try HCIEvent(
            HCIEventPacket(code: .disconnectionComplete, parameters: [0x00, 0x40, 0x00, 0x13, 0xAA])
        )
        #expect(
            event == .disconnectionComplete(.init(connectionHandle: 0x0040, reason: .remoteUserTerminatedConnection))
        )
    }

    @Test func aNoOperationCommandCompleteHasNoStatus() throws {
        let event = try HCIEvent(HCIEventPacket(code: .commandComplete, parameters: [0x01, 0x00, 0x00]))
        guard case .commandComplete(let complete) = event else {
            Issue.record("not a Command Complete")
            return
        }
        #expect(complete.opcode == .noOperation)
        #expect(complete.status == nil)
    }
}
