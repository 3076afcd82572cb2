/// One kind of misbehaviour to inject into a simulated device or its link.
///
/// "Every n" counts from the moment the fault is injected, 1-based: `.dropResponses(every: 3)`
/// drops the 3rd, 6th, 9th … response. Random choices use the seed of ``Faults`` so a run
/// replays exactly.
public enum Fault: Sendable, Hashable, CustomStringConvertible {
    /// Drop every n-th response (the request was processed; the client times out).
    case dropResponses(every: Int)
    /// Drop each response with a probability in 0…1.
    case dropResponsesRandomly(probability: Double)
    /// Drop every n-th request before the device sees it (nothing is processed).
    case dropRequests(every: Int)
    /// Send every n-th response twice.
    case duplicateResponses(every: Int)
    /// Delay every n-th response by a duration (later responses are not held back).
    case delayResponses(by: Duration, every: Int)
    /// Hold every n-th response back and send it after the next one.
    case reorderResponses(every: Int)
    /// Answer the next `count` requests with `rc 10` (EBUSY) without processing them.
    case busy(count: Int)
    /// Flip one bit in every n-th response (over a serial link the CRC then fails).
    case corruptResponses(every: Int)
    /// Close the link after this many more requests (the last one is answered first).
    case disconnect(afterRequests: Int)
    /// Close the link right after answering a reset, as a USB or BLE device disappears.
    case disconnectOnReset
    /// Lose the answer to the n-th request from now, once (the request was carried out).
    case loseAnswer(toRequest: Int)
    /// Close the link once, right after answering the n-th request from now.
    case linkLoss(atRequest: Int)
    /// Hear nothing more after this many requests from now, for good: a device out of range or
    /// dead, as a connectionless link (UDP) shows it. Its state is kept: clearing the fault is
    /// the device coming back.
    case silence(afterRequests: Int)
    /// Lose power at a moment: the request in flight is not answered, RAM state is lost and the
    /// device boots again (an interrupted swap is resumed, as MCUboot does).
    case powerLoss(PowerLossMoment)
    /// Reset while handling the n-th request from now (a watchdog, the reset pin): it is not
    /// answered and RAM is lost — but not the retention area, so a boot mode set before survives.
    case deviceReset(atRequest: Int)
    /// Store one bit of the image upload chunk that covers this offset flipped (a flash write
    /// that went wrong), once. The upload's offsets all succeed; only the final hash check
    /// (`match`) and the bootloader's validation can tell.
    case corruptFlash(atOffset: Int)

    public var description: String {
        switch self {
        case .dropResponses(let n): "drop every \(n). response"
        case .dropResponsesRandomly(let p): "drop responses with probability \(p)"
        case .dropRequests(let n): "drop every \(n). request"
        case .duplicateResponses(let n): "duplicate every \(n). response"
        case .delayResponses(let d, let n): "delay every \(n). response by \(d)"
        case .reorderResponses(let n): "reorder every \(n). response"
        case .busy(let count): "answer \(count) requests with EBUSY"
        case .corruptResponses(let n): "corrupt every \(n). response"
        case .disconnect(let n): "disconnect after \(n) requests"
        case .disconnectOnReset: "disconnect on reset"
        case .loseAnswer(let n): "lose the answer to request \(n)"
        case .linkLoss(let n): "link loss at request \(n)"
        case .silence(let n): "silent after \(n) requests"
        case .powerLoss(let moment): "power loss \(moment)"
        case .deviceReset(let n): "device reset at request \(n)"
        case .corruptFlash(let offset): "corrupt flash at offset \(offset)"
        }
    }
}

/// When a power loss strikes.
public enum PowerLossMoment: Sendable, Hashable, CustomStringConvertible {
    /// While handling the n-th request from now (it is not answered).
    case atRequest(Int)
    /// During the image upload chunk that would write past this offset (the chunk is lost).
    case duringUpload(atOffset: Int)
    /// During the next swap MCUboot performs at boot, after its first flash step; the swap
    /// resumes at the following boot.
    case duringSwap
    /// At this step (0-based) of the swaps and copies of the next boot that makes any — a sector
    /// copy or the trailer write, counted across images (``MCUbootModel/lastSwapSteps`` of a
    /// boot without faults tells how many there are).
    case duringSwapStep(Int)

    public var description: String {
        switch self {
        case .atRequest(let n): "at request \(n)"
        case .duringUpload(let offset): "during upload at offset \(offset)"
        case .duringSwap: "during swap"
        case .duringSwapStep(let step): "during swap, at step \(step)"
        }
    }
}

/// A set of faults with the seed for their random choices. A value: build it, compare it, hand
/// it to ``SimulatedDevice/setFaults(_:)``.
public struct Faults: Sendable, Hashable {
    /// The active faults, applied in order.
    public var faults: [Fault]
    /// Seed of the generator used by random faults.
    public var seed: UInt64

    /// Creates a fault set.
    /// - Parameters:
    ///   - faults: the faults.
    ///   - seed: seed for random choices.
    public init(_ faults: [Fault] = [], seed: UInt64 = 1) {
        self.faults = faults
        self.seed = seed
    }

    /// No faults.
    public static let none = Faults()
}

/// SplitMix64: a tiny deterministic generator so fault runs replay by seed.
struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// What the link does with the responses to one request.
public struct LinkDelivery: Sendable {
    /// One frame to send, after a delay from now.
    public struct Scheduled: Sendable, Hashable {
        /// The bytes of one SMP frame.
        public var frame: [UInt8]
        /// How long to wait before sending it.
        public var delay: Duration
    }

    /// The frames to send, in order.
    public var responses: [Scheduled]
    /// Close the link after sending them.
    public var disconnect: Bool
    /// The device reboots: ``SimulatedDevice/Configuration/resetDelay`` after these answers
    /// (`os reset`), or it already did (power lost, no answers). Links that end with the device
    /// (BLE, USB) drop then.
    public var deviceResets: Bool

    /// Creates a delivery.
    /// - Parameters:
    ///   - responses: the frames to send.
    ///   - disconnect: close the link after sending them.
    ///   - deviceResets: the device reboots.
    public init(responses: [Scheduled], disconnect: Bool, deviceResets: Bool = false) {
        self.responses = responses
        self.disconnect = disconnect
        self.deviceResets = deviceResets
    }
}

/// The state of fault injection: counters and the generator. Pure; the device actor owns one.
struct FaultInjector: Sendable {
    private(set) var faults: Faults
    private var random: SeededRandom
    private var requestCount = 0
    private var responseCount = 0
    private var busyRemaining = 0
    private var held: [UInt8]?

    init(_ faults: Faults) {
        self.faults = faults
        random = SeededRandom(seed: faults.seed)
        for fault in faults.faults {
            if case .busy(let count) = fault { busyRemaining += max(0, count) }
        }
    }

    /// What happens to an incoming request before the device sees it.
    enum RequestFate: Equatable {
        case process
        case drop
        case busy
        case powerLoss
        case reset
    }

    mutating func admit() -> RequestFate {
        requestCount += 1
        for fault in faults.faults {
            switch fault {
            case .dropRequests(let n) where n > 0 && requestCount % n == 0: return .drop
            case .silence(let n) where requestCount > n: return .drop
            case .powerLoss(.atRequest(let n)) where requestCount == n: return .powerLoss
            case .deviceReset(let n) where requestCount == n: return .reset
            default: continue
            }
        }
        if busyRemaining > 0 {
            busyRemaining -= 1
            return .busy
        }
        return .process
    }

    /// The upload offset at which power is lost, if that fault is set.
    var powerLossUploadOffset: Int? {
        for case .powerLoss(.duringUpload(let offset)) in faults.faults { return offset }
        return nil
    }

    /// The swap step at which power is to be lost, if that fault is set.
    var powerLossSwapStep: Int? {
        for fault in faults.faults {
            switch fault {
            case .powerLoss(.duringSwap): return 1
            case .powerLoss(.duringSwapStep(let step)): return max(0, step)
            default: continue
            }
        }
        return nil
    }

    /// The power loss during a swap struck; it is used up.
    mutating func consumeSwapPowerLoss() {
        faults.faults.removeAll {
            switch $0 {
            case .powerLoss(.duringSwap), .powerLoss(.duringSwapStep): true
            default: false
            }
        }
    }

    /// The upload offset whose flash write is corrupted, if that fault is set.
    var flashCorruptionOffset: Int? {
        for case .corruptFlash(let offset) in faults.faults { return offset }
        return nil
    }

    /// Consumes the flash-corruption fault once it fired.
    mutating func consumeFlashCorruption() {
        faults.faults.removeAll { if case .corruptFlash = $0 { true } else { false } }
    }

    /// Consumes the upload power-loss fault once it fired.
    mutating func consumeUploadPowerLoss() {
        faults.faults.removeAll { if case .powerLoss(.duringUpload) = $0 { true } else { false } }
    }

    /// Applies the link faults to the responses of one request.
    mutating func deliver(_ responses: [[UInt8]], latency: Duration, wasReset: Bool) -> LinkDelivery {
        var out: [LinkDelivery.Scheduled] = []
        var disconnect = false
        for response in responses {
            responseCount += 1
            var frame = response
            var delay = latency
            var copies = 1
            var hold = false
            for fault in faults.faults {
                switch fault {
                case .dropResponses(let n) where n > 0 && responseCount % n == 0: copies = 0
                // Answers go out right after their request is handled: the count is this one's.
                case .loseAnswer(let n) where requestCount == n: copies = 0
                case .dropResponsesRandomly(let p) where Double(random.next() % 1_000_000) / 1_000_000 < p: copies = 0
                case .duplicateResponses(let n) where n > 0 && responseCount % n == 0: copies = max(copies, 1) * 2
                case .delayResponses(let extra, let n) where n > 0 && responseCount % n == 0: delay += extra
                case .reorderResponses(let n) where n > 0 && responseCount % n == 0: hold = true
                case .corruptResponses(let n) where n > 0 && responseCount % n == 0 && !frame.isEmpty:
                    let index = Int(random.next() % UInt64(frame.count))
                    frame[index] ^= 0x01
                default: continue
                }
            }
            if copies == 0 { continue }
            if hold && held == nil {
                held = frame
                continue
            }
            for _ in 0..<copies { out.append(.init(frame: frame, delay: delay)) }
            if let previous = held {
                held = nil
                out.append(.init(frame: previous, delay: delay))
            }
        }
        for fault in faults.faults {
            if case .disconnect(let n) = fault, requestCount >= n { disconnect = true }
            if fault == .disconnectOnReset && wasReset { disconnect = true }
            if case .linkLoss(let n) = fault, requestCount == n { disconnect = true }
        }
        return LinkDelivery(responses: out, disconnect: disconnect)
    }
}
