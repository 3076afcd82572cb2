import ArgumentParser
import MCUmgr
import SMPCore

/// `mcumgr stat list | stat NAME`: the statistics group (2).
struct StatCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stat",
        abstract: "Statistics: 'stat list' lists the groups, 'stat NAME' shows one group's counters.",
        subcommands: [List.self, Show.self],
        defaultSubcommand: Show.self
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the statistics groups.")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let response = try await CommandContext.withClient(global) {
                try await $0.send(StatisticsManagement.ListGroups())
            }
            if global.json {
                try CommandSupport.emit(response: response)
            } else if response.groups.isEmpty {
                Console.out("no statistics groups")
            } else {
                for name in response.groups { Console.out(name) }
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show",
            abstract: "Show the counters of one statistics group (also: mcumgr stat NAME)."
        )
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The group name, from 'mcumgr stat list' (the list when omitted).") var name: String?

        func run() async throws {
            guard let name else {
                var list = List()
                list.global = global
                try await list.run()
                return
            }
            let response: StatisticsManagement.GroupData.Response
            do {
                response = try await CommandContext.withClient(global) {
                    try await $0.send(StatisticsManagement.GroupData(name: name))
                }
            } catch let refusal as SMPDeviceError where StatisticsManagement.isMissingGroup(refusal) {
                throw DeviceRefusal(
                    StatisticsManagement.missingGroupMessage(
                        name,
                        listCommand: CommandHints(global).command("stat list")
                    ),
                    cause: refusal
                )
            }
            if global.json {
                try CommandSupport.emit(response: response)
                return
            }
            Console.out("stat group \(response.name)")
            guard !response.fields.isEmpty else {
                Console.out("  (no counters)")
                return
            }
            for line in CommandSupport.table([], response.fields.map { [$0.name, "\($0.value)"] }, rightAligned: [1]) {
                Console.out("  " + line)
            }
        }
    }
}
