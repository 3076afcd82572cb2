import Foundation
import MCUmgrCommands

/// The `mcumgr` executable: everything lives in MCUmgrCommands so tests can run it in-process.
@main
enum Entry {
    static func main() async {
        let status = await MCUmgrCommand.main(arguments: Array(CommandLine.arguments.dropFirst()))
        exit(status)
    }
}
