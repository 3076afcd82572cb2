import ArgumentParser
import Foundation
import MCUmgr
import MCUmgrDFU
import MCUmgrFleet
import SMPCore
import SMPLink
import SMPPOSIX

// How `mcumgr` reports the errors of the library modules and of the system: their exit statuses
// live here, in the command line's module, so that the libraries know nothing of them.

extension SMPDeviceError: ExitStatusReporting {
    /// The device refused: status 1, `device_refused`.
    var failureReport: FailureReport {
        FailureReport(status: .failed, kind: "device_refused", message: MCUmgrCommand.describe(self))
    }
}

extension SMPTransportError: ExitStatusReporting {
    /// A link failure (status 2, `link`), except a request too large for the device.
    var failureReport: FailureReport {
        if code == .frameTooLarge {
            // Said before anything was sent: the request, made of what the user typed, does not
            // fit the device. Not a link failure; retrying cannot help, sending less can.
            return RequestTooLarge(self).failureReport
        }
        return FailureReport(status: .link, kind: "link", message: MCUmgrCommand.describe(self))
    }
}

extension SMPTransferError: ExitStatusReporting {
    /// A transfer that failed: status 2, `transfer`.
    var failureReport: FailureReport {
        FailureReport(status: .link, kind: "transfer", message: MCUmgrCommand.describe(self))
    }
}

extension SMPError: ExitStatusReporting {
    /// Answers that make no sense (status 2, `protocol`), except our own request that cannot be
    /// encoded, which is bad input (65).
    var failureReport: FailureReport {
        switch code {
        case .frameTooLarge:
            // Raised while encoding our own request (a payload over the 16-bit length).
            return RequestTooLarge(self).failureReport
        case .encodingFailed:
            // Our own request, made of what the user gave, that CBOR cannot carry. The library's
            // message names the request type, so only the code is shown.
            return FailureReport(status: .badInput, kind: "bad_input", message: "the request cannot be sent: \(code)")
        default:
            return FailureReport(status: .link, kind: "protocol", message: MCUmgrCommand.describe(self))
        }
    }
}

extension FirmwareUpgradeError: ExitStatusReporting {
    /// The status of the error's category; cancelled is an interrupt, said as the upgrade
    /// command says one.
    var failureReport: FailureReport {
        if code == .cancelled {
            // The upgrade command says how far it got; an engine cancelled some other way still
            // gets the same words.
            return Interrupted.upgrade(at: state, uploadPercent: nil).failureReport
        }
        let status: ExitStatus =
            switch code.category {
            case .deviceRefused: .failed
            case .link: .link
            case .outcome: .upgradeOutcome
            case .input: .badInput
            case .cancelled: .interrupted
            }
        return FailureReport(status: status, kind: code.category.kind, message: MCUmgrCommand.describe(self))
    }
}

extension RolloutStoreError: ExitStatusReporting {
    /// The store failed, not a device (the devices' records say nothing about it): status 4,
    /// `state`.
    var failureReport: FailureReport { FailureReport(status: .state, kind: "state", message: message) }
}

extension CancellationError: ExitStatusReporting {
    /// Interrupted, status 130. Transfers and upgrades say how far they got (``Interrupted``);
    /// any other command did nothing half-way worth resuming.
    var failureReport: FailureReport {
        FailureReport(status: .interrupted, kind: "interrupted", message: "interrupted")
    }
}

extension CocoaError: ExitStatusReporting {
    /// A file error that escaped a command's own handling: status 66, in the system's words, not
    /// Foundation's `Error Domain=… UserInfo={…}` dump.
    var failureReport: FailureReport {
        let path = filePath ?? url?.path
        return FailureReport(
            status: .unreadableInput,
            kind: "unreadable_input",
            message: (path.map { "\($0): " } ?? "") + FileErrorReason.describe(self)
        )
    }
}

extension ExitCode: ExitStatusReporting {
    /// Thrown on purpose with a number: the number is kept; the kind says what it means when
    /// the number is one of ours.
    var failureReport: FailureReport {
        let status = ExitStatus(rawValue: rawValue) ?? .failed
        let kind = FailureReport.kinds.first { $0.status == status }?.kind ?? "failed"
        return FailureReport(status: status, kind: kind, message: "exit status \(rawValue)")
    }
}
