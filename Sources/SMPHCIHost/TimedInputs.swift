import SMPBytes
import SMPHCI
import SMPLink

/// What a driver of a pure state machine receives: its inputs (HCI events for a procedure, ATT
/// PDUs for a GATT client or server) and its own timer, in one order.
enum TimedInput<Value: Sendable>: Sendable {
    case input(Value)
    /// The timer armed with this generation ran out (an older generation's is stale: ignore it).
    case timer(UInt64)
    /// The source is gone (the controller, or the connection).
    case ended(any Error)
}

/// The inputs of one state machine and its one timer, so that the machine sees one input at a
/// time: a procedure running on the host (bring-up, a scan, a connection, advertising) gets
/// every HCI event while it runs; a GATT client or server gets its connection's ATT PDUs.
final class TimedInputs<Value: Sendable>: Sendable {
    let inputs: AsyncStream<TimedInput<Value>>
    private let continuation: AsyncStream<TimedInput<Value>>.Continuation
    private let clock: SMPClock
    /// The timer's generation and its task: re-arming cancels the previous wait.
    private let timer = Locked<(generation: UInt64, task: Task<Void, Never>?)>((generation: 0, task: nil))

    init(clock: SMPClock) {
        (inputs, continuation) = AsyncStream.makeStream(of: TimedInput<Value>.self)
        self.clock = clock
    }

    func deliver(_ input: TimedInput<Value>) { continuation.yield(input) }

    /// Starts the timer (replacing any running one).
    /// - Parameter duration: how long until `TimedInput/timer(_:)` arrives.
    /// - Returns: the generation the timer input will carry.
    @discardableResult
    func arm(after duration: Duration) -> UInt64 {
        let clock = clock
        let continuation = continuation
        return timer.withLock { timer in
            timer.task?.cancel()
            timer.generation += 1
            let generation = timer.generation
            timer.task = Task {
                guard (try? await clock.sleep(duration)) != nil else { return }
                continuation.yield(.timer(generation))
            }
            return generation
        }
    }

    /// Stops the timer.
    func disarm() {
        timer.withLock { timer in
            timer.task?.cancel()
            timer.task = nil
            timer.generation += 1
        }
    }

    /// Whether a timer input is the current one.
    func isCurrent(_ generation: UInt64) -> Bool { timer.withLock { $0.generation == generation } }

    func finish() {
        disarm()
        continuation.finish()
    }
}

/// A procedure on the host: every HCI event while it runs.
typealias HCIProcedure = TimedInputs<HCIEvent>
