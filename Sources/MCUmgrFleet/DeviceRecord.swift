import Foundation
import MCUmgrDFU

/// Where one device of a rollout stands: what a store keeps, what `mcumgr fleet status` shows.
///
/// Every device ends a rollout in exactly one of ``Status/upgraded``, ``Status/alreadyCurrent``,
/// ``Status/failed``, ``Status/unreachable`` and ``Status/skipped``; ``Status/pending`` and
/// ``Status/running`` are on the way there.
public struct DeviceRecord: Sendable, Hashable {
    /// The states of a device in a rollout.
    public enum Status: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// Not started, or waiting to start again (a retry after a link failure, an upgrade
        /// caught by an interruption).
        case pending
        /// An upgrade is in progress (on this host or, with a shared store, another).
        case running
        /// Upgraded, and the outcome verified by reading the device's image list.
        case upgraded
        /// The device already ran the image, confirmed: nothing was uploaded.
        case alreadyCurrent = "already-current"
        /// The upgrade failed with the engine's error (``DeviceRecord/failure``); not retried
        /// unless asked (`--retry-failed`).
        case failed
        /// The device never answered.
        case unreachable
        /// Not started because the rollout halted (a canary failed, the budget ran out).
        case skipped

        /// Whether the device has ended (nothing more is done to it in this rollout).
        public var isFinal: Bool { self != .pending && self != .running }
        /// Whether the outcome counts against the failure budget.
        public var isFailure: Bool { self == .failed || self == .unreachable }

        public var description: String { rawValue }

        /// How many of the records have each status.
        /// - Parameter records: the records.
        public static func counts(of records: [DeviceRecord]) -> [Status: Int] {
            records.reduce(into: [:]) { $0[$1.status, default: 0] += 1 }
        }

        /// Devices by status in one line, in the statuses' order: `3 upgraded, 1 failed` (empty
        /// for none), as every table of a rollout ends.
        /// - Parameter counts: devices by status.
        public static func countsLine(_ counts: [Status: Int]) -> String {
            allCases.filter { counts[$0, default: 0] > 0 }.map { "\(counts[$0, default: 0]) \($0)" }
                .joined(separator: ", ")
        }
    }

    /// The device's identity: its inventory name, or its URL.
    public var id: String
    /// Its connection URL, as printed.
    public var url: String
    /// Its position in the inventory (0-based): its wave, and the order of starts.
    public var position: Int
    /// Labels from the inventory (`host=` ties it to hosts).
    public var labels: [String: String]
    /// Where it stands.
    public var status: Status
    /// The part of the rollout it was (last) started in.
    public var phase: RolloutPhase?
    /// Upgrades started for it (interrupted ones included).
    public var attempts: Int
    /// Attempts that failed on the link (what retries are counted against).
    public var linkFailures: Int
    /// Not to be started again before this time (a retry's back-off).
    public var notBefore: Date?
    /// Why it failed, or why its last attempt did.
    public var failure: AttemptFailure?
    /// The version it ran before, when known.
    public var versionBefore: String?
    /// The version it runs after, when known.
    public var versionAfter: String?
    /// When its first attempt in this rollout started (what the wave gates are checked against).
    public var firstStartedAt: Date?
    /// When its last attempt started.
    public var startedAt: Date?
    /// When it ended.
    public var endedAt: Date?
    /// The worker (host) that ran its last attempt.
    public var worker: String?
    /// Bytes the device confirmed during its uploads.
    public var uploadedBytes: Int
    /// With a shared store, while it runs: until when its worker holds it without renewing.
    public var leaseUntil: Date?

    /// Creates a pending record.
    /// - Parameters:
    ///   - id: the device's identity.
    ///   - url: its URL.
    ///   - position: its position in the inventory.
    ///   - labels: its labels.
    public init(id: String, url: String, position: Int, labels: [String: String] = [:]) {
        self.id = id
        self.url = url
        self.position = position
        self.labels = labels
        status = .pending
        attempts = 0
        linkFailures = 0
        uploadedBytes = 0
    }

    /// The hosts a device is tied to (its `host` label, comma-separated), or `nil` for any.
    public var hosts: [String]? {
        guard let value = labels["host"] else { return nil }
        return value.split(separator: ",").map(String.init)
    }

    /// Whether a worker of this name may upgrade the device.
    public func isReachable(from worker: String) -> Bool { hosts.map { $0.contains(worker) } ?? true }
}

/// The part of a rollout a device was started in.
public enum RolloutPhase: Sendable, Hashable, CustomStringConvertible {
    /// The canary: first, alone.
    case canary
    /// A wave (0-based).
    case wave(Int)

    /// As stored: `canary`, `wave-1`, … (1-based for people).
    public var description: String {
        switch self {
        case .canary: return "canary"
        case .wave(let index): return "wave-\(index + 1)"
        }
    }

    /// Parses ``description``.
    public init?(_ text: String) {
        if text == "canary" {
            self = .canary
        } else if text.hasPrefix("wave-"), let number = Int(text.dropFirst(5)), number >= 1 {
            self = .wave(number - 1)
        } else {
            return nil
        }
    }
}

/// Why an upgrade attempt failed: the engine's error, or the rollout's reason, as typed data that
/// can be stored.
public struct AttemptFailure: Sendable, Hashable {
    /// What failed. An open set spelled in snake_case, as the fleet's JSON and its stores write it:
    /// the engine's codes (`FirmwareUpgradeError.Code.name`) and the rollout's own.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String

        /// A code by its snake_case name.
        /// - Parameter rawValue: the name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The code of an engine error.
        /// - Parameter code: the engine's code.
        public init(_ code: FirmwareUpgradeError.Code) { self.init(rawValue: code.name) }

        /// A code as a store holds it: its name, or the engine's words (`link failed`) that state
        /// written before the names were stored holds.
        /// - Parameter text: the stored text.
        public init(stored text: String) {
            let engine = FirmwareUpgradeError.Code.allCases.first { $0.description == text }
            self.init(rawValue: engine?.name ?? text.lowercased().replacingOccurrences(of: " ", with: "_"))
        }

        /// The link failed and the engine's retries ran out.
        public static let linkFailed = Code(FirmwareUpgradeError.Code.linkFailed)
        /// The device refused a command.
        public static let deviceRejected = Code(FirmwareUpgradeError.Code.deviceRejected)
        /// A running device this worker's inventory does not list (another host's device).
        public static let notInInventory = Code(rawValue: "not_in_inventory")
        /// The device's URL gave no transport (a serial port that does not open, an unknown host).
        public static let transportUnavailable = Code(rawValue: "transport_unavailable")
        /// The rollout halted (or could not start the device) before its turn.
        public static let skipped = Code(rawValue: "skipped")

        /// The engine's code of that name, when it is one.
        public var engineCode: FirmwareUpgradeError.Code? {
            FirmwareUpgradeError.Code.allCases.first { $0.name == rawValue }
        }

        /// The class of failure in the vocabulary of the CLI's `--json` error object's `kind`
        /// (`device_refused`, `link`, `upgrade_outcome`, `bad_input`, `interrupted`); `nil` for a
        /// skipped device, which did not fail.
        public var kind: String? {
            if let engineCode { return engineCode.category.kind }
            switch self {
            case .notInInventory: return "bad_input"
            case .transportUnavailable: return "link"
            default: return nil
            }
        }

        /// The name in words, for tables.
        public var description: String { engineCode?.description ?? rawValue.replacingOccurrences(of: "_", with: " ") }
    }

    /// What failed.
    public var code: Code
    /// The engine state it failed in; `nil` when the engine did not run (the rollout's reasons).
    public var state: FirmwareUpgrade.State?
    /// What failed and what to try.
    public var message: String

    /// Creates a failure.
    /// - Parameters:
    ///   - code: what failed.
    ///   - state: the engine state it failed in, if the engine ran.
    ///   - message: the explanation.
    public init(code: Code, state: FirmwareUpgrade.State?, message: String) {
        self.code = code
        self.state = state
        self.message = message
    }

    /// The failure an engine error describes.
    /// - Parameter error: the engine's error.
    public init(_ error: FirmwareUpgradeError) {
        var message = error.message
        // The engine's messages usually name their cause already.
        if let cause = error.cause, !message.contains("\(cause)") { message += " (\(cause))" }
        self.init(code: Code(error.code), state: error.state, message: message)
    }

    /// A failure as a store's three columns hold it, or `nil` when they hold none. A state that is
    /// not an engine state (older stores wrote `pending` for a skipped device) reads as none.
    /// - Parameters:
    ///   - storedCode: the code column (a name, or the engine's words in older state).
    ///   - state: the state column.
    ///   - message: the message column.
    public init?(storedCode: String?, state: String?, message: String?) {
        guard let storedCode else { return nil }
        self.init(
            code: Code(stored: storedCode),
            state: state.flatMap(FirmwareUpgrade.State.init(rawValue:)),
            message: message ?? ""
        )
    }

    /// Whether the device answered before the failure. The engine's first request is the
    /// parameters read, so a link failure there (or before it) means the device never answered:
    /// with the retries spent it is unreachable, and an earlier attempt cut there installed nothing.
    public var deviceAnswered: Bool {
        !(code == .linkFailed && [nil, .idle, .requestingParameters].contains(state))
    }

    /// One line for tables: `link failed while uploading: …`.
    public var summary: String {
        "\(code)" + (state.map { " while \($0)" } ?? "") + ": \(message)"
    }
}

/// How one upgrade attempt of a device ended, as the rollout sees it.
public enum AttemptResult: Sendable, Hashable {
    /// The device runs the image; verified.
    case upgraded(versionBefore: String?, versionAfter: String?, uploadedBytes: Int)
    /// The device already ran the image, confirmed; nothing was uploaded.
    case alreadyCurrent(version: String?)
    /// The device refused, or the outcome was not what the mode promised: never retried.
    case failed(AttemptFailure)
    /// The link failed: retried with back-off. `reached`: the device answered at least once
    /// (otherwise, with the retries spent, it is unreachable).
    case linkFailed(AttemptFailure, reached: Bool)
    /// The attempt was cancelled (an interruption): the device is planned again next time.
    case interrupted

    /// Classifies an engine error: link failures are retried (and a device that never answered is
    /// unreachable), cancellations are interruptions, everything else — a refusal, a failed
    /// verification, an unusable package — is a failure that no retry can mend.
    /// - Parameter error: the engine's error.
    public init(_ error: FirmwareUpgradeError) {
        switch error.code.category {
        case .link:
            let failure = AttemptFailure(error)
            self = .linkFailed(failure, reached: failure.deviceAnswered)
        case .cancelled:
            self = .interrupted
        case .deviceRefused, .outcome, .input:
            self = .failed(AttemptFailure(error))
        }
    }
}
