import ArgumentParser
import Foundation
import MCUmgr
import MCUmgrDFU
import MCUmgrFleet
import SMPCore
import SMPLink
import SMPPOSIX

/// The exit statuses of `mcumgr`: one table, from which the help text, the `--json` error
/// object and the tests all read, so that they cannot drift apart.
public enum ExitStatus: Int32, CaseIterable, Sendable {
    /// Everything worked.
    case success = 0
    /// The device refused, or the operation failed on the device (a shell command that returned
    /// non-zero, an image MCUboot would reject).
    case failed = 1
    /// The link failed or timed out, or the device's answers made no sense.
    case link = 2
    /// An upgrade whose verified outcome is not what its mode promised.
    case upgradeOutcome = 3
    /// A rollout's state (its PostgreSQL database or SQLite file) cannot be reached, read or
    /// written: the store failed, not a device.
    case state = 4
    /// The command line is wrong (sysexits `EX_USAGE`).
    case usage = 64
    /// Input that is not what it must be: not an image, a corrupt package, a value too large for
    /// the device to take (sysexits `EX_DATAERR`).
    case badInput = 65
    /// An input file that is missing, a folder or unreadable (sysexits `EX_NOINPUT`).
    case unreadableInput = 66
    /// Interrupted (SIGINT) or cancelled: 128 + 2, as shells report it.
    case interrupted = 130

    /// What the status means, for `mcumgr --help` and the README.
    public var meaning: String {
        switch self {
        case .success: "success"
        case .failed: "the device refused, or the operation failed on the device"
        case .link: "link failure or timeout, or answers that make no sense"
        case .upgradeOutcome: "an upgrade whose verified outcome is not what its mode promised"
        case .state: "a rollout's state (database or file) cannot be reached, read or written"
        case .usage: "usage error"
        case .badInput: "bad input data: not an image, a corrupt package, too big for the device"
        case .unreadableInput: "an input file that is missing, a folder or unreadable"
        case .interrupted: "interrupted"
        }
    }

    /// The table as lines, `STATUS  MEANING`.
    static var helpLines: [String] {
        allCases.map { String($0.rawValue).padding(toLength: 5, withPad: " ", startingAt: 0) + $0.meaning }
    }
}

/// A failure as the user sees it: one line on stderr, an exit status, and with `--json` one
/// error object on stdout. Built from any error the command tree throws.
struct FailureReport: Sendable, Equatable {
    /// The exit status.
    var status: ExitStatus
    /// A stable machine name for the class of failure, finer than the status (both
    /// `device_refused` and `failed` exit 1); see ``kinds``.
    var kind: String
    /// One line for people, without the `error: ` prefix.
    var message: String

    /// Every `kind` and the status it comes with (documented in `mcumgr --help`).
    static let kinds: [(kind: String, status: ExitStatus)] = [
        ("device_refused", .failed), ("failed", .failed), ("link", .link), ("transfer", .link),
        ("protocol", .link), ("upgrade_outcome", .upgradeOutcome), ("state", .state), ("usage", .usage),
        ("bad_input", .badInput), ("unreadable_input", .unreadableInput), ("interrupted", .interrupted),
    ]

    init(status: ExitStatus, kind: String, message: String) {
        self.status = status
        self.kind = kind
        // One line whatever the source: a message with line breaks would break the contract
        // that scripts read one line of stderr.
        self.message = message.split(whereSeparator: \.isNewline).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        .filter { !$0.isEmpty }.joined(separator: "; ")
    }

    /// Classifies an error: the report its type gives (``ExitStatusReporting``), else a usage
    /// error when the parser made it, else `failed` (status 1) with its description.
    /// swift-argument-parser's own errors (usage, `ExitCode`) keep its statuses; help and version
    /// requests are not failures and must not come here.
    init(_ error: any Error) {
        if let reporting = error as? any ExitStatusReporting {
            self = reporting.failureReport
        } else if let error = error as? CocoaError {
            // An `NSError` of the Cocoa domain (Foundation's file APIs on Darwin) becomes a
            // `CocoaError` only through this cast, not through a protocol it does not adopt.
            self = error.failureReport
        } else if MCUmgrCommand.exitCode(for: error) == .validationFailure {
            // A parse or validation error: the parser's first line names the problem.
            self.init(status: .usage, kind: "usage", message: MCUmgrCommand.parserMessage(for: error))
        } else {
            // Our own failures (`CommandFailure`, a shell command's return code, an image
            // MCUboot would reject) say what happened in their description, on every line.
            self.init(status: .failed, kind: "failed", message: "\(error)")
        }
    }

    /// The `--json` error object: `{"error": {"status": N, "kind": "...", "message": "..."}}`,
    /// the same shape for every verb.
    var json: JSONValue {
        .object([
            (
                "error",
                .object([
                    ("status", .int(Int64(status.rawValue))), ("kind", .string(kind)), ("message", .string(message)),
                ])
            )
        ])
    }
}

/// An error that says how `mcumgr` reports it: its exit status, the `kind` of the `--json`
/// error object, and the one line for people.
///
/// ## Giving a new error type its status
///
/// An error type that adopts nothing is reported as `failed`, status 1, with its description
/// (or as a usage error, 64, when swift-argument-parser made it). For any other status:
///
/// 1. Adopt this protocol in MCUmgrCommands: beside the type when it is the CLI's own
///    (``InputFileError``), in `ExitStatus+LibraryErrors.swift` as an extension when it comes from
///    a library module (`SMPTransportError`), so that the libraries know nothing of exit statuses.
/// 2. Build the report with ``FailureReport/init(status:kind:message:)``: a status of
///    ``ExitStatus`` and a kind listed in ``FailureReport/kinds`` with that status; the message
///    names no types, since people read it.
/// 3. Add a row to `ExitStatusTests`, which runs a command line for each status.
///
/// A type whose values differ in status decides per value (`SMPTransportError`: a request too
/// large for the device is bad input, any other link error a link failure).
protocol ExitStatusReporting: Error {
    /// How this error is reported: status, kind and message.
    var failureReport: FailureReport { get }
}

/// A request that does not fit the device, said in terms of what the user can change: bad input
/// (status 65), since a retry cannot help and sending less can.
struct RequestTooLarge: ExitStatusReporting, CustomStringConvertible {
    /// The request's size in bytes, when known.
    var size: Int?
    /// The largest request the device takes, when known.
    var limit: Int?
    /// What the user gave that made it too large, e.g. "the shell command"; `nil` when unknown.
    var what: String?

    init(size: Int?, limit: Int?, what: String? = nil) {
        self.size = size
        self.limit = limit
        self.what = what
    }

    /// The sizes a link or the client reported as fields (their messages name internal request
    /// types and so are not shown as they are).
    /// - Parameters:
    ///   - error: a `.frameTooLarge` link error.
    ///   - what: what the user gave that made it too large.
    init(_ error: SMPTransportError, what: String? = nil) {
        self.init(size: error.frameSize, limit: error.frameLimit, what: what)
    }

    /// The size of a request too large to encode (a payload over the 16-bit length field). Its
    /// limit is the format's, not the device's, so it is not said as the device's.
    /// - Parameters:
    ///   - error: a `.frameTooLarge` encoding error.
    ///   - what: what the user gave that made it too large.
    init(_ error: SMPError, what: String? = nil) {
        self.init(size: error.frameSize, limit: nil, what: what)
    }

    var description: String {
        let subject = what ?? "the request"
        var text = "\(subject) is too large for the device"
        // "it" is the request itself; a named subject is part of one.
        let request = what == nil ? "it" : "the request"
        switch (size, limit) {
        case (let size?, let limit?):
            text += ": \(request) takes \(size) bytes and the device accepts at most \(limit) per request"
        case (nil, let limit?): text += ": the device accepts at most \(limit) bytes per request"
        case (let size?, nil): text += ": \(request) takes \(size) bytes"
        case (nil, nil): break
        }
        return text + "; " + (what == nil ? "send less (a shorter value, name or command)" : "shorten it")
    }

    var failureReport: FailureReport { FailureReport(status: .badInput, kind: "bad_input", message: description) }
}

/// Ctrl-C during a transfer or an upgrade, with how far it got: the line on stderr says where it
/// stopped and what to do next (status 130).
struct Interrupted: ExitStatusReporting, CustomStringConvertible {
    /// The share of the transfer the device had confirmed, in percent, while transferring.
    var percent: Int?
    /// The upgrade step it stopped in, when not uploading (`resetting`, `verifying`, …).
    var step: String?
    /// Whether the same command continues the work (an image upload or an upgrade: the device
    /// resumes an upload with the same hash) or starts it over (a file transfer).
    var resumes: Bool

    var description: String {
        var text = "interrupted"
        if let percent { text += " at \(percent)%" }
        if let step { text += " while \(step)" }
        return text + "; run the same command again to " + (resumes ? "resume" : "start over")
    }

    var failureReport: FailureReport {
        FailureReport(status: .interrupted, kind: "interrupted", message: description)
    }

    /// An upgrade stopped in a state: the share uploaded when known, else the step (none before
    /// the first).
    /// - Parameters:
    ///   - state: the upgrade's state when it stopped.
    ///   - uploadPercent: the share of the upload the device had confirmed, if known.
    static func upgrade(at state: FirmwareUpgrade.State, uploadPercent: Int?) -> Interrupted {
        if state == .uploading, let uploadPercent { return Interrupted(percent: uploadPercent, resumes: true) }
        return Interrupted(step: state == .idle ? nil : "\(state)", resumes: true)
    }

    /// Whether an error that ended a transfer or an upgrade is the interrupt: a cancellation, or
    /// anything thrown once the task was cancelled (a link closed by the cancellation).
    static func isInterrupt(_ error: any Error) -> Bool {
        Task.isCancelled || error is CancellationError || (error as? FirmwareUpgradeError)?.code == .cancelled
    }
}
