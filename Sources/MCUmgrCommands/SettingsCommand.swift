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
            abstract: "Read a setting; the value is shown in hex, or as text with --text."
        )
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The setting's name, e.g. bt/name.") var name: String
        @Option(name: .customLong("max-size"), help: "The most bytes to return.") var maxSize: UInt32?
        @Flag(help: "Show the value as UTF-8 text.") var text = false

        func run() async throws {
            let response = try await CommandContext.withClient(global) {
                try await $0.send(SettingsManagement.Read(name: name, maxSize: maxSize))
            }
            let decoded = String(data: response.value, encoding: .utf8)
            if text && decoded == nil {
                Console.err("warning: the value of \(name) is not UTF-8 text; showing hex")
            }
            if global.json {
                var members: [(String, JSONValue)] = [
                    ("name", .string(name)), ("val", .string(Hex.encode(response.value))),
                ]
                if text, let decoded { members.append(("text", .string(decoded))) }
                if let limit = response.maxSize { members.append(("max_size", .uint(UInt64(limit)))) }
                CommandSupport.emit(.object(members))
                return
            }
            if text, let decoded {
                CommandSupport.emitText(decoded)
            } else {
                Console.out(response.value.isEmpty ? "(empty)" : Hex.encode(response.value))
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
            _ = try await CommandContext.withClient(global) {
                try await $0.send(SettingsManagement.Write(name: name, value: bytes))
            }
            if global.json {
                CommandSupport.emit(.object([("name", .string(name)), ("val", .string(Hex.encode(bytes)))]))
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
            _ = try await CommandContext.withClient(global) { try await $0.send(SettingsManagement.Delete(name: name)) }
            if global.json {
                CommandSupport.emit(.object([("name", .string(name))]))
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
            _ = try await CommandContext.withClient(global) { try await $0.send(SettingsManagement.Save(name: name)) }
            if global.json {
                CommandSupport.emit(.object(name.map { [("name", .string($0))] } ?? []))
            } else {
                Console.out(name.map { "saved \($0) to storage" } ?? "saved settings to storage")
            }
        }
    }
}
