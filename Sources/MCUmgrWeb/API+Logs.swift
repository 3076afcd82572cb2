import Foundation
import Hummingbird
import MCUmgr
import SMPBytes
import SMPCore

/// Logs (Apache Mynewt's log group): the logs a device keeps, their entries from an index on,
/// with module and level named as the device names them, and clear — as `mcumgr log` does. A
/// device without the group (every Zephyr) says so in the command line's words.
extension API {
    struct LogEntries: Codable, Sendable {
        struct Entry: Codable, Sendable {
            var index: UInt32
            var timestamp: Int64
            var module: String
            var level: String
            /// The text, or the bytes in hex.
            var message: String
            var isText: Bool
        }

        struct Log: Codable, Sendable {
            var name: String
            var type: Int
            var entries: [Entry]
        }

        /// The index to ask from for newer entries.
        var nextIndex: UInt32
        var logs: [Log]
        /// The log names the device lists.
        var names: [String]
    }

    func registerLogs(on router: Router<BasicRequestContext>) {
        router.get("/api/devices/:id/logs") { request, context in
            try await answer {
                let session = try await registry.session(context.parameters.require("id"))
                let query = request.uri.queryParameters
                let name = query["log"].map(String.init).flatMap { $0.isEmpty ? nil : $0 }
                let index = try Self.logIndex(query["index"].map(String.init))
                let entries = try await session.withClient { client in
                    try await Self.logs(client, name: name, index: index)
                }
                return try Self.json(entries)
            }
        }
        router.post("/api/devices/:id/logs/clear") { _, context in
            try await answer {
                let session = try await registry.session(context.parameters.require("id"))
                try await session.checkIdle()
                _ = try await session.withClient { try await $0.send(LogManagement.Clear()) }
                return try Self.json(Done(done: "cleared the logs"))
            }
        }
    }

    /// `index` as the page sends it: empty, or a number from 0 on.
    static func logIndex(_ text: String?) throws(WebError) -> UInt32? {
        guard let text = text?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
        guard let index = UInt32(text) else {
            throw WebError(.badRequest, "From index: '\(text)' is not a number from 0 to \(UInt32.max)")
        }
        return index
    }

    /// The entries, with the device's own names for modules and levels where it lists them (a
    /// device that does not keeps the numbers).
    static func logs(_ client: SMPClient, name: String?, index: UInt32?) async throws -> LogEntries {
        let names = try await client.send(LogManagement.List()).logNames
        let shown = try await client.send(LogManagement.Show(logName: name, timestamp: nil, index: index))
        let modules = try? await client.send(LogManagement.ModuleList()).modules
        let levels = try? await client.send(LogManagement.LevelList()).levels
        func named(_ value: UInt8, _ table: SMPNamedValues<Int>?) -> String {
            table?.first { $0.value == Int(value) }?.name ?? String(value)
        }
        return LogEntries(
            nextIndex: shown.nextIndex,
            logs: shown.logs.map { log in
                LogEntries.Log(
                    name: log.name,
                    type: log.type,
                    entries: log.entries.map { entry in
                        let (message, isText): (String, Bool) =
                            switch entry.message {
                            case .text(let text): (text, true)
                            case .bytes(let bytes): (Hex.encode(bytes), false)
                            }
                        return LogEntries.Entry(
                            index: entry.index,
                            timestamp: entry.timestamp,
                            module: named(entry.module, modules),
                            level: named(entry.level, levels),
                            message: message,
                            isText: isText
                        )
                    }
                )
            },
            names: names
        )
    }
}
