import Foundation
import MCUmgrConnect
import SMPHCIHost

/// How a rollout proceeds: a canary first, then waves, within a failure budget, so many devices at
/// a time, retrying link failures.
public struct RolloutPolicy: Sendable, Hashable {
    /// A share of the fleet: a number of devices or a percentage of them.
    public enum Share: Sendable, Hashable, CustomStringConvertible {
        /// This many devices.
        case count(Int)
        /// This percentage of the devices (0…100).
        case percent(Double)

        /// Parses `N` or `P%`.
        /// - Parameter text: the text, e.g. `5` or `12.5%`.
        /// - Throws: ``RolloutPolicyError`` for anything else.
        public init(parsing text: String) throws(RolloutPolicyError) {
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            if trimmed.hasSuffix("%") {
                guard let value = Double(trimmed.dropLast()), value.isFinite, (0...100).contains(value) else {
                    throw RolloutPolicyError("'\(text)' is not a percentage from 0% to 100%")
                }
                self = .percent(value)
            } else {
                guard let value = Int(trimmed), value >= 0 else {
                    throw RolloutPolicyError("'\(text)' is not a number of devices or a percentage (N or P%)")
                }
                self = .count(value)
            }
        }

        /// The number of devices this share is of `total`; a percentage rounds up, so `10%` of 5
        /// devices is one device, never none.
        public func devices(of total: Int) -> Int {
            switch self {
            case .count(let count): return min(count, total)
            case .percent(let percent): return min(total, Int((Double(total) * percent / 100).rounded(.up)))
            }
        }

        public var description: String {
            switch self {
            case .count(let count): return "\(count)"
            case .percent(let percent):
                return percent == percent.rounded() ? "\(Int(percent))%" : "\(percent)%"
            }
        }
    }

    /// Devices that go first, alone; any failure among them halts the rollout.
    public var canary: Int
    /// Cumulative shares of the fleet that each wave brings to an end (`10%, 50%, 100%`); a wave
    /// starts only when every device of the waves before it has ended within the budget. The last
    /// wave always reaches the whole fleet.
    public var waves: [Share]
    /// Failed or unreachable devices the rollout tolerates; one more stops new starts (`nil`: no
    /// limit).
    public var maxFailures: Share?
    /// Upgrades running at once on this host.
    public var parallel: Int
    /// Upgrades at once through one Bluetooth LE adapter (a serial port always takes one).
    public var bleConnectionsPerAdapter: Int
    /// Times an upgrade that failed on the link is started again.
    public var linkRetries: Int
    /// Wait before the first retry; each further retry waits twice as long, up to ``maximumBackoff``.
    public var backoff: Duration
    /// The longest wait between retries.
    public var maximumBackoff: Duration

    /// Creates a policy.
    /// - Parameters:
    ///   - canary: devices that go first, alone (0: none).
    ///   - waves: cumulative shares, e.g. `[.percent(10), .percent(50), .percent(100)]`.
    ///   - maxFailures: failed or unreachable devices tolerated (`nil`: no limit).
    ///   - parallel: upgrades at once on this host.
    ///   - bleConnectionsPerAdapter: upgrades at once through one Bluetooth LE adapter.
    ///   - linkRetries: restarts of an upgrade that failed on the link.
    ///   - backoff: the first retry's wait; doubled for each further retry.
    ///   - maximumBackoff: the longest wait.
    public init(
        canary: Int = 0,
        waves: [Share] = [.percent(100)],
        maxFailures: Share? = nil,
        parallel: Int = 8,
        bleConnectionsPerAdapter: Int = 1,
        linkRetries: Int = 2,
        backoff: Duration = .seconds(2),
        maximumBackoff: Duration = .seconds(60)
    ) {
        self.canary = max(0, canary)
        self.waves = waves.isEmpty ? [.percent(100)] : waves
        self.maxFailures = maxFailures
        self.parallel = max(1, parallel)
        self.bleConnectionsPerAdapter = max(1, bleConnectionsPerAdapter)
        self.linkRetries = max(0, linkRetries)
        self.backoff = backoff
        self.maximumBackoff = maximumBackoff
    }

    /// Parses `--waves`: cumulative shares separated by commas, each larger than the one before
    /// (`10%,50%,100%` or `5,50,100%`).
    /// - Parameter text: the list.
    /// - Throws: ``RolloutPolicyError`` naming the share that is wrong.
    public static func waves(parsing text: String) throws(RolloutPolicyError) -> [Share] {
        var shares: [Share] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let share = try Share(parsing: String(part))
            if case .count(0) = share { throw RolloutPolicyError("a wave of 0 devices in '\(text)'") }
            if case .percent(let p) = share, p == 0 { throw RolloutPolicyError("a wave of 0% in '\(text)'") }
            shares.append(share)
        }
        for (previous, next) in zip(shares, shares.dropFirst()) {
            if case .percent(let a) = previous, case .percent(let b) = next, b <= a {
                throw RolloutPolicyError("waves are cumulative and must grow: \(next) after \(previous) in '\(text)'")
            }
            if case .count(let a) = previous, case .count(let b) = next, b <= a {
                throw RolloutPolicyError("waves are cumulative and must grow: \(next) after \(previous) in '\(text)'")
            }
        }
        return shares
    }

    /// The number of devices every wave has brought to an end, cumulatively; the last is the
    /// fleet, and each is at least one more than the one before.
    /// - Parameter total: the fleet's size.
    public func waveEnds(of total: Int) -> [Int] {
        var ends: [Int] = []
        for share in waves {
            let end = min(total, max(share.devices(of: total), (ends.last ?? 0) + 1))
            if end > (ends.last ?? 0) { ends.append(end) }
        }
        if ends.last != total, total > 0 { ends.append(total) }
        return ends
    }

    /// The failures tolerated in a fleet of `total`, or `nil` without a limit.
    public func failureLimit(of total: Int) -> Int? {
        guard let maxFailures else { return nil }
        switch maxFailures {
        case .count(let count): return count
        case .percent(let percent): return Int((Double(total) * percent / 100).rounded(.down))
        }
    }

    /// The wait before the retry after `failures` link failures (1 for the first).
    public func backoff(afterFailures failures: Int) -> Duration {
        var wait = backoff
        for _ in 1..<max(1, failures) where wait < maximumBackoff { wait = wait * 2 }
        return min(wait, maximumBackoff)
    }
}

/// A rollout policy that cannot be used.
public struct RolloutPolicyError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong.
    public var message: String
    /// Creates an error.
    /// - Parameter message: what is wrong.
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

extension ConnectionURL {
    /// What an upgrade through this URL holds that another cannot share at the same time: a serial
    /// port, or a Bluetooth LE adapter's connections; `nil` for networked devices.
    public var fleetResource: FleetResource? {
        switch self {
        case .serial(let path, _, _, _): return .serialPort(path)
        case .ble(_, _, _, _, .some(let controller)): return .bleAdapter(controller.location)
        case .ble(_, _, let adapter, _, nil): return .bleAdapter(adapter ?? "default")
        case .udp, .simulator: return nil
        }
    }
}

/// Something upgrades share: one upgrade per serial port, a few per Bluetooth LE adapter.
public enum FleetResource: Sendable, Hashable, CustomStringConvertible {
    /// A serial port, by path: one upgrade at a time.
    case serialPort(String)
    /// A Bluetooth LE adapter (`hci0`), limited to ``RolloutPolicy/bleConnectionsPerAdapter``.
    case bleAdapter(String)

    public var description: String {
        switch self {
        case .serialPort(let path): return "serial port \(path)"
        case .bleAdapter(let adapter): return "Bluetooth adapter \(adapter)"
        }
    }
}
