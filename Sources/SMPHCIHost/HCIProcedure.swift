import SMPBytes
import SMPHCI
import SMPLink

/// What a procedure running on the host (bring-up, a scan, a connection, advertising) receives:
/// every HCI event while it runs, and its own timer.
enum HCIProcedureInput: Sendable {
    case event(HCIEvent)
    /// The timer armed with this generation ran out (an older generation's is stale: ignore it).
    case timer(UInt64)
    /// The controller is gone.
    case ended(any Error)
}

/// The inputs of one procedure, and its one timer. The host feeds events in; the procedure's
/// driver reads them in order, so a pure state machine sees one input at a time.
final class HCIProcedure: Sendable {
    let inputs: AsyncStream<HCIProcedureInput>
    private let continuation: AsyncStream<HCIProcedureInput>.Continuation
    private let clock: SMPClock
    /// The timer's generation and its task: re-arming cancels the previous wait.
    private let timer = Locked<(generation: UInt64, task: Task<Void, Never>?)>((generation: 0, task: nil))

    init(clock: SMPClock) {
        (inputs, continuation) = AsyncStream.makeStream(of: HCIProcedureInput.self)
        self.clock = clock
    }

    func deliver(_ input: HCIProcedureInput) { continuation.yield(input) }

    /// Starts the timer (replacing any running one).
    /// - Parameter duration: how long until ``HCIProcedureInput/timer(_:)`` arrives.
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
