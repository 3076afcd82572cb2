import ArgumentParser
import Foundation
import MCUmgr
import SMPBytes
import SMPCore

/// `mcumgr settings read|write|delete|commit|load|save`: the settings group (3).
struct SettingsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "settings",
        abstract: "Settings: read, write, delete, commit, load, save.",
        subcommands: [Read.self, Write.self, Delete.self, Commit.self, Load.self, Save.self]
    )

    struct Read: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Read a setting: shown as text when it is printable UTF-8, else in hex (--hex forces hex).",
            discussion: """
                A value is shown as written: 'mcumgr settings write app/name hello' reads back as \
                hello. Values that are not printable UTF-8 text (binary, or with control \
                characters other than tab and line breaks) are shown in hex. With --json the value \
                is always in "val" as hex, and also in "text" when it is printable.
                """
        )
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The setting's name, e.g. bt/name.") var name: String
        @Option(name: .customLong("max-size"), help: "The most bytes to return.") var maxSize: UInt32?
        @Flag(help: "Show the value in hex even when it is text.") var hex = false
        @Flag(help: "Show the value as text, warning when it is not UTF-8 (the default for printable values).")
        var text = false

        func validate() throws {
            if hex && text { throw ValidationError("give --hex or --text, not both") }
        }

        /// The value as text when it is printable UTF-8 (the rule lives with the group, shared
        /// with the web page's Settings screen); `nil` otherwise.
        static func printableText(_ value: Data) -> String? { SettingsManagement.printableText(value) }

        func run() async throws {
            let response = try await CommandContext.withClient(global) {
                try await $0.send(SettingsManagement.Read(name: name, maxSize: maxSize))
            }
            let utf8 = String(data: response.value, encoding: .utf8)
            if text && utf8 == nil {
                Console.err("warning: the value of \(name) is not UTF-8 text; showing hex")
            }
            // --text shows any UTF-8 (control characters included); by default only printable text.
            let shown = hex ? nil : (text ? utf8 : Self.printableText(response.value))
            if global.json {
                // Which setting (the request's `name`, not its `max_size`: the `max_size` shown is
                // the device's), what the device answered, and ours, hand-shaped: `text`, the
                // value as text when it is text, which no wire field carries.
                var output = try JSONValue(encoding: SettingsManagement.Read(name: name))
                    .merging(try JSONValue(encoding: response))
                if let shown { output = output.merging(.object([("text", .string(shown))])) }
                CommandSupport.emit(output)
            } else {
                Self.show(response, shown: shown)
            }
        }

        /// The value for people: as text when it is shown as text, else in hex, and the device's
        /// size limit on stderr.
        /// - Parameters:
        ///   - response: the device's answer.
        ///   - shown: the value as text, or `nil` for hex.
        private static func show(_ response: SettingsManagement.Read.Response, shown: String?) {
            if response.value.isEmpty {
                Console.out("(empty)")
            } else if let shown {
                CommandSupport.emitText(shown)
            } else {
                Console.out(Hex.encode(response.value))
            }
            if let limit = response.maxSize {
                Console.err("note: the device returns at most \(limit) bytes of a value")
            }
        }
    }

    struct Write: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a setting: VALUE is text, or hex with --hex."
        )
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The setting's name.") var name: String
        @Argument(help: "The value.") var value: String
        @Flag(help: "VALUE is hex bytes, e.g. 0a0b or 0a:0b.") var hex = false

        func run() async throws {
            let bytes = hex ? try CommandSupport.hex(value, what: "value") : Data(value.utf8)
            let request = SettingsManagement.Write(name: name, value: bytes)
            _ = try await CommandContext.withClient(global) { try await $0.send(request) }
            if global.json {
                try CommandSupport.emit(request: request)
            } else {
                Console.out("wrote \(name) (\(bytes.count) byte\(bytes.count == 1 ? "" : "s"))")
            }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a setting.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The setting's name.") var name: String

        func run() async throws {
            let request = SettingsManagement.Delete(name: name)
            _ = try await CommandContext.withClient(global) { try await $0.send(request) }
            if global.json {
                try CommandSupport.emit(request: request)
            } else {
                Console.out("deleted \(name)")
            }
        }
    }

    struct Commit: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Apply the settings written so far.")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            _ = try await CommandContext.withClient(global) { try await $0.send(SettingsManagement.Commit()) }
            if global.json { CommandSupport.emit(.object([])) } else { Console.out("committed") }
        }
    }

    struct Load: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Load the settings from persistent storage.")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            _ = try await CommandContext.withClient(global) { try await $0.send(SettingsManagement.Load()) }
            if global.json { CommandSupport.emit(.object([])) } else { Console.out("loaded settings from storage") }
        }
    }

    struct Save: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Save the settings (or one subtree) to persistent storage."
        )
        @OptionGroup var global: GlobalOptions
        @Argument(help: "A subtree to save (default: everything).") var name: String?

        func run() async throws {
            let request = SettingsManagement.Save(name: name)
            _ = try await CommandContext.withClient(global) { try await $0.send(request) }
            if global.json {
                try CommandSupport.emit(request: request)
            } else {
                Console.out(name.map { "saved \($0) to storage" } ?? "saved settings to storage")
            }
        }
    }
}
