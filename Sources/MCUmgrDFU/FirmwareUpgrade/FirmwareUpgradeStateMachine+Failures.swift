import MCUmgr
import SMPCore
import SMPLink

/// How the outcome of an action the driver performed becomes the machine's input: which
/// failures are the device refusing, the link failing, an outcome that is unknown.
extension FirmwareUpgradeStateMachine.Input {
    /// What a failed action means to the machine: a refusal, a link failure, an unknown
    /// outcome, a corrupted upload, a pause or a cancel.
    /// - Parameters:
    ///   - error: what the action threw.
    ///   - action: the action that failed.
    package init(failure error: any Error, during action: FirmwareUpgradeStateMachine.Action) {
        self = Self.classify(error, during: action)
    }

    private static func classify(_ error: any Error, during action: FirmwareUpgradeStateMachine.Action) -> Self {
        switch error {
        case is CancellationError: return .cancel
        case is UploadPaused: return .pause
        case let refusal as SMPDeviceError: return .deviceRefused(refusal)
        case let failure as FirmwareUpgradeError: return .failed(failure.code, failure.message)
        case let transfer as SMPTransferError where transfer.code == .deviceHashMismatch:
            return .uploadCorrupted(transfer)
        case let transfer as SMPTransferError:
            // The device answers but does not take the data: retried after a reconnection, as
            // a link failure is, within the step's retries.
            return .linkFailed(transfer)
        case let link as SMPTransportError:
            // A probe that timed out may be one lost datagram; a dropped link is the device gone.
            if case .probe = action, link.code == .timeout { return .probeUnanswered }
            // A request that must not be repeated, cut off or unanswered: it may have happened.
            // One a closed connection refused never left, and is sent again after reconnecting.
            if link.code == .outcomeUnknown || (link.code == .disconnected && action.changesDevice && !link.nothingSent)
            {
                return .outcomeUnknown(link)
            }
            return .linkFailed(link)
        case let malformed as SMPError: return .linkFailed(malformed)
        default: return .linkFailed(SendableDescription(error))
        }
    }
}

/// Thrown inside the driver when a pause stops an upload.
struct UploadPaused: Error {}

/// An error that is not known to be `Sendable`, kept as its description.
struct SendableDescription: Error, Sendable, CustomStringConvertible {
    let description: String
    init(_ error: any Error) { description = "\(error)" }
}

extension FirmwareUpgradeStateMachine.Action {
    /// The run ends with it.
    var ends: Bool {
        switch self {
        case .succeed, .fail: true
        default: false
        }
    }

    /// Sent once and never repeated: a cut link leaves its outcome unknown.
    var changesDevice: Bool {
        switch self {
        case .reset, .eraseAppSettings, .processSUITEnvelope: true
        default: false
        }
    }
}
