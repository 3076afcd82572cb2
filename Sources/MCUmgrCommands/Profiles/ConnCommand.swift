import ArgumentParser
import Foundation
import MCUmgrConnect

/// `mcumgr conn add|list|show|remove`: saved connection profiles, used with `-c NAME`.
struct ConnCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "conn",
        abstract: "Manage saved connection profiles (use one with -c NAME).",
        subcommands: [Add.self, List.self, Show.self, Remove.self]
    )

    /// Why the client options do nothing here.
    static let noDevice = "it edits the saved profiles and talks to no device"

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Save a profile: mcumgr conn add NAME URL.",
            discussion: "An existing profile of that name is kept unless --force is given."
        )
        @OptionGroup var global: LocalOptions
        @Argument(help: "The profile name.") var name: String
        @Argument(help: "The connection URL, e.g. udp://192.168.1.10 or serial:///dev/ttyACM0?baud=115200.") var url:
            String
        @Flag(help: "Replace a profile of the same name.") var force = false

        func validate() throws {
            try global.refuseClientOptions(command: "conn add", reason: ConnCommand.noDevice)
            guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || "-_.".contains($0) }) else {
                throw ValidationError("profile names use letters, digits, '-', '_' and '.'")
            }
            do {
                _ = try ConnectionURL(parsing: url)
            } catch {
                throw ValidationError(error.message)
            }
        }

        func run() throws {
            try ProfileStore().save(name: name, url: url, replacing: force)
            if global.json {
                Console.out(JSONValue.object([("name", .string(name)), ("url", .string(url))]).rendered())
            } else {
                Console.out("saved profile '\(name)': \(url)")
            }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List profiles, or show one.")
        @OptionGroup var global: LocalOptions
        @Argument(help: "A profile name (all when omitted).") var name: String?

        func validate() throws {
            try global.refuseClientOptions(command: "conn show", reason: ConnCommand.noDevice)
        }

        func run() throws {
            let store = ProfileStore()
            let profiles = try name.map { [(name: $0, url: try store.url(of: $0))] } ?? store.load()
            ConnCommand.print(profiles, json: global.json)
        }
    }

    /// `conn list`, as `image list` lists: people reach for it before `show`.
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the saved profiles.")
        @OptionGroup var global: LocalOptions

        func validate() throws {
            try global.refuseClientOptions(command: "conn list", reason: ConnCommand.noDevice)
        }

        func run() throws {
            ConnCommand.print(try ProfileStore().load(), json: global.json)
        }
    }

    /// Prints profiles as a name/URL table, or one JSON object of name to URL.
    static func print(_ profiles: [(name: String, url: String)], json: Bool) {
        if json {
            Console.out(JSONValue.object(profiles.map { ($0.name, .string($0.url)) }).rendered())
        } else if profiles.isEmpty {
            Console.out("no profiles; add one with 'mcumgr conn add NAME URL'")
        } else {
            let width = profiles.map(\.name.count).max() ?? 0
            for profile in profiles {
                Console.out(profile.name.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + profile.url)
            }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a profile.")
        @OptionGroup var global: LocalOptions
        @Argument(help: "The profile name.") var name: String

        func validate() throws {
            try global.refuseClientOptions(command: "conn remove", reason: ConnCommand.noDevice)
        }

        func run() throws {
            try ProfileStore().remove(name: name)
            if !global.json { Console.out("removed profile '\(name)'") } else { Console.out("{}") }
        }
    }
}
