import ArgumentParser
import MCUmgr
import SMPCore

/// `mcumgr enum count|list|single|details`: the enumeration group (10).
struct EnumCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "enum",
        abstract: "Enumeration: which management groups the device supports.",
        subcommands: [Count.self, List.self, Single.self, Details.self]
    )

    static func label(_ id: UInt16) -> String {
        "\(id) (\(SMPGroup(rawValue: id).name))"
    }

    struct Count: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "How many groups the device supports.")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let response = try await CommandContext.withClient(global) {
                try await $0.send(EnumerationManagement.GroupCount())
            }
            if global.json {
                try CommandSupport.emit(response: response)
            } else {
                Console.out("\(response.count) group\(response.count == 1 ? "" : "s")")
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the groups the device supports.")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let response = try await CommandContext.withClient(global) {
                try await $0.send(EnumerationManagement.ListGroups())
            }
            if global.json {
                try CommandSupport.emit(response: response)
                return
            }
            let rows = response.groups.map { ["\($0)", SMPGroup(rawValue: $0).name] }
            for line in CommandSupport.table(["group", "name"], rows, rightAligned: [0]) { Console.out(line) }
        }
    }

    struct Single: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The group at a position of the device's list (0-based)."
        )
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The position.") var index: UInt32

        func run() async throws {
            let response = try await CommandContext.withClient(global) {
                try await $0.send(EnumerationManagement.GroupAtIndex(index: index))
            }
            if global.json {
                try CommandSupport.emit(response: response)
            } else {
                Console.out("group " + EnumCommand.label(response.group) + (response.isLast ? ", the last" : ""))
            }
        }
    }

    struct Details: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Name and handler count of every group, or of the groups given."
        )
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Group ids (default: all).") var groups: [UInt16] = []

        func run() async throws {
            let response = try await CommandContext.withClient(global) {
                try await $0.send(EnumerationManagement.GroupDetails(groups: groups.isEmpty ? nil : groups))
            }
            if global.json {
                try CommandSupport.emit(response: response)
                return
            }
            let rows = response.groups.map {
                ["\($0.group)", $0.name ?? "-", $0.handlers.map { "\($0)" } ?? "-"]
            }
            for line in CommandSupport.table(["group", "name", "handlers"], rows, rightAligned: [0, 2]) {
                Console.out(line)
            }
        }
    }
}
