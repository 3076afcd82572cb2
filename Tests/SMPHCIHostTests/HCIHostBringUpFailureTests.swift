import SMPHCI
import SMPTestSupport
import Testing

@testable import SMPHCIHost

/// A controller that breaks the bring-up: the open fails with an ``HCIError`` saying how, and
/// returns (nothing waits for ever: the suite's time limit would say so).
@Suite(.timeLimit(.minutes(5)))
struct HCIHostBringUpFailureTests {
    /// One way to break the bring-up, and what the host must say.
    struct Breakage: Sendable, CustomStringConvertible {
        var description: String
        var opcode: HCIOpcode
        var answer: FakeAnswer
        var code: HCIError.Code
        var fragment: String
        var status: HCIStatus? = nil
    }

    static let breakages: [Breakage] = [
        Breakage(
            description: "a Command Complete too short for its opcode",
            opcode: .reset,
            answer: .raw([0x04, 0x0E, 0x02, 0x01, 0x03]),
            code: .malformedPacket,
            fragment: "Command Complete"
        ),
        Breakage(
            description: "return parameters too short for Read BD_ADDR",
            opcode: .readBDADDR,
            answer: .complete([0x00, 0x01, 0x02]),
            code: .malformedPacket,
            fragment: "BD_ADDR"
        ),
        Breakage(
            description: "a byte that is no packet indicator",
            opcode: .readLocalVersionInformation,
            answer: .raw([0x07, 0x0E, 0x04, 0x01, 0x01, 0x10, 0x00]),
            code: .unknownPacketIndicator,
            fragment: "0x07"
        ),
        Breakage(
            description: "a failing status",
            opcode: .readBDADDR,
            answer: .complete([HCIStatus.hardwareFailure.rawValue]),
            code: .commandFailed,
            fragment: "Read BD_ADDR",
            status: .hardwareFailure
        ),
        Breakage(
            description: "a refusal by Command Status",
            opcode: .leSetEventMask,
            answer: .status(.commandDisallowed),
            code: .commandFailed,
            fragment: "refused",
            status: .commandDisallowed
        ),
        Breakage(
            description: "the controller closing the socket",
            opcode: .readLocalSupportedCommands,
            answer: .close,
            code: .protocolViolation,
            fragment: "closed the connection"
        ),
        Breakage(
            description: "half an event, then the socket closed",
            opcode: .setEventMask,
            answer: .raw([0x04, 0x0E, 0x04, 0x01]),
            code: .protocolViolation,
            fragment: "closed the connection"
        ),
        Breakage(
            description: "a controller that never answers",
            opcode: .setEventMask,
            answer: .silence,
            code: .timeout,
            fragment: "0x0C01"
        ),
    ]

    @Test(arguments: breakages)
    func theOpenFailsWithAClearError(_ breakage: Breakage) async throws {
        let fake = try FakeController()
        defer { fake.stop() }
        fake.answer(breakage.opcode, with: breakage.answer)
        let opening = Task {
            // Short only for the silent controller; answers come at once otherwise.
            try await HCIHost.open(fake.address, commandTimeout: .seconds(1))
        }
        if breakage.fragment == "closed the connection", case .raw = breakage.answer {
            // The half event is on its way; the controller then goes away.
            _ = try await fake.command(breakage.opcode)
            fake.closeConnection()
        }
        let error = await #expect(throws: HCIError.self) { _ = try await opening.value }
        #expect(error?.code == breakage.code, "\(String(describing: error))")
        #expect(error?.message.contains(breakage.fragment) == true, "\(String(describing: error))")
        if let status = breakage.status { #expect(error?.status == status) }
    }

    /// A previous host's advertising report, malformed, arriving before Reset is answered, does
    /// not matter to the bring-up (only a malformed answer to a command does).
    @Test func aMalformedEventThatAnswersNothingIsIgnored() async throws {
        let fake = try FakeController()
        defer { fake.stop() }
        let reset = HCI.CommandComplete(numHCICommandPackets: 1, opcode: .reset, returnParameters: [0]).packet
        // LE Meta, LE Advertising Report announcing 3 reports and holding none; then the answer.
        fake.answer(.reset, with: .raw([0x04, 0x3E, 0x02, 0x02, 0x03] + H4Encoder.encode(.event(reset))))
        let host = try await HCIHost.open(fake.address, commandTimeout: .seconds(60))
        #expect(host.controller.publicAddress == FakeControllerState.publicAddress)
        await host.close()
    }
}

/// A controller that keeps sending events that answer nothing: the command's timeout still
/// runs, even though the link is never silent.
@Suite(.timeLimit(.minutes(5)))
struct HCIHostChatterTests {
    @Test func aChatteringControllerThatNeverAnswersTimesOut() async throws {
        let fake = try FakeController()
        defer { fake.stop() }
        fake.answer(.setEventMask, with: .silence)
        let opening = Task { try await HCIHost.open(fake.address, commandTimeout: .seconds(1)) }
        _ = try await fake.command(.setEventMask)
        let chatter = Task {
            // A vendor event every 50 ms for a minute at most: the link is never quiet for the
            // half second after which the reader reports silence.
            for _ in 0..<1200 {
                if Task.isCancelled { return false }
                fake.send(HCIEventPacket(code: HCIEventCode(rawValue: 0xFF), parameters: [0x01]))
                try? await Task.sleep(for: .milliseconds(50))
            }
            return true
        }
        let error = await #expect(throws: HCIError.self) { _ = try await opening.value }
        #expect(error?.code == .timeout, "\(String(describing: error))")
        chatter.cancel()
        #expect(await chatter.value == false, "the open gave up only once the chatter stopped")
    }
}
