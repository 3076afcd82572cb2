import MCUmgr
import MCUmgrDFU
import SMPCore
import SMPLink
import Testing

/// How a failed action becomes the machine's input: the distinctions the machine's safety rests
/// on (a cut reset is an unknown outcome, not a link failure to retry; a probe timeout is the
/// device going away; the device's hash check is a corrupted upload).
@Suite struct FirmwareUpgradeStateMachineFailuresTests {
    typealias Action = FirmwareUpgradeStateMachine.Action
    typealias Input = FirmwareUpgradeStateMachine.Input

    /// The input's case name, to compare without Equatable payloads.
    static func kind(_ input: Input) -> String {
        switch input {
        case .outcomeUnknown: "outcomeUnknown"
        case .uploadCorrupted: "uploadCorrupted"
        case .probeUnanswered: "probeUnanswered"
        case .linkFailed: "linkFailed"
        case .deviceRefused: "deviceRefused"
        case .failed: "failed"
        case .pause: "pause"
        case .cancel: "cancel"
        default: "other"
        }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var error: any Error & Sendable
        var action: Action
        var expected: String
        var testDescription: String { "\(error) during \(action) → \(expected)" }
    }

    static let upload = Action.upload(imageIndex: 0, packageIndex: 0)

    static let cases: [Case] = [
        Case(error: SMPTransportError(.timeout), action: .probe, expected: "probeUnanswered"),
        Case(error: SMPTransportError(.timeout), action: .readImageList, expected: "linkFailed"),
        Case(error: SMPTransportError(.outcomeUnknown), action: .reset(force: false), expected: "outcomeUnknown"),
        Case(error: SMPTransportError(.disconnected), action: .reset(force: false), expected: "outcomeUnknown"),
        Case(error: SMPTransportError(.disconnected), action: .eraseAppSettings, expected: "outcomeUnknown"),
        // Refused by a connection already closed: the reset never left, so it is not unknown.
        Case(
            error: SMPTransportError.closed("the UDP socket is closed"),
            action: .reset(force: false),
            expected: "linkFailed"
        ),
        Case(
            error: SMPTransportError.closed("the connection is closed"),
            action: .eraseAppSettings,
            expected: "linkFailed"
        ),
        Case(error: SMPTransportError(.disconnected), action: upload, expected: "linkFailed"),
        Case(error: SMPTransferError(.deviceHashMismatch), action: upload, expected: "uploadCorrupted"),
        Case(error: SMPTransferError(.stalled), action: upload, expected: "linkFailed"),
        Case(error: SMPTransferError(.sessionLost), action: upload, expected: "linkFailed"),
        Case(error: CancellationError(), action: upload, expected: "cancel"),
        Case(
            error: FirmwareUpgradeError(.slotBusy, state: .validating, "busy"),
            action: .readImageList,
            expected: "failed"
        ),
    ]

    @Test(arguments: cases)
    func aFailureBecomesTheInputItMeans(_ example: Case) {
        #expect(Self.kind(Input(failure: example.error, during: example.action)) == example.expected)
    }
}
