import Foundation
import MCUmgrCommands
import SMPBytes

/// The `mcumgr` executable: everything lives in MCUmgrCommands so tests can run it in-process.
///
/// The main thread waits on a semaphore while the command runs on the global executor, rather
/// than parking in `dispatch_main` (what an `async` main does on Linux): nothing here needs the
/// main queue, and Valgrind 3.19 dies on `dispatch_main`'s exit of the main thread, which would
/// keep the tool out of reach of callgrind's instruction counts (docs/BENCHMARKS.md).
@main
enum Entry {
    static func main() {
        // The command's exit status, handed from the command's task to the waiting main thread.
        let status = Locked<Int32>(1)
        let finished = DispatchSemaphore(value: 0)
        let command = Task.detached {
            let result = await MCUmgrCommand.main(arguments: Array(CommandLine.arguments.dropFirst()))
            status.withLock { $0 = result }
            finished.signal()
            return result
        }
        let interrupt = Interrupt(command)
        finished.wait()
        interrupt.cancel()
        exit(status.withLock { $0 })
    }
}

/// Ctrl-C: the first cancels the command, which ends the way a cancelled transfer or upgrade
/// ends (status 130, one line saying how to resume; MCUboot only acts on whole images, so the
/// device is never left unbootable); a second exits at once.
final class Interrupt {
    private let source: any DispatchSourceSignal

    init(_ command: Task<Int32, Never>) {
        signal(SIGINT, SIG_IGN)
        source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        let count = Locked(0)
        source.setEventHandler {
            let presses = count.withLock { count in
                count += 1
                return count
            }
            if presses > 1 { exit(130) }
            command.cancel()
        }
        source.resume()
    }

    func cancel() { source.cancel() }
}
