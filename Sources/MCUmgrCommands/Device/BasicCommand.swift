import ArgumentParser
import MCUmgr
import SMPCore

/// `mcumgr basic erase-storage`: the Zephyr basic group (63).
struct BasicCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "basic",
        abstract: "Zephyr basic management: erase-storage.",
        subcommands: [EraseStorage.self]
    )

    struct EraseStorage: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "erase-storage",
            abstract: "Erase the device's storage partition (settings, file system data)."
        )
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            _ = try await CommandContext.withClient(global) { try await $0.send(ZephyrBasicManagement.EraseStorage()) }
            if global.json { CommandSupport.emit(.object([])) } else { Console.out("erased the storage partition") }
        }
    }
}
