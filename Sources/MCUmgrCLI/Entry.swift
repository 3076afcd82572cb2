import Foundation
import MCUmgrCommands

/// The `mcumgr` executable: everything lives in MCUmgrCommands so tests can run it in-process.
@main
enum Entry {
    static func main() async {
        let command = Task { await MCUmgrCommand.main(arguments: Array(CommandLine.arguments.dropFirst())) }
        let interrupt = Interrupt(command)
        let status = await command.value
        interrupt.cancel()
        exit(status)
    }
}

/// Ctrl-C: the first cancels the command, which ends the way a cancelled transfer or upgrade
/// ends (status 130, one line saying how to resume; MCUboot only acts on whole images, so the
/// device is never left unbootable); a second exits at once.
final class Interrupt: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var count = 0
    private let source: any DispatchSourceSignal

    init(_ command: Task<Int32, Never>) {
        signal(SIGINT, SIG_IGN)
        source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        source.setEventHandler { [self] in
            let presses = lock.withLock {
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
