import Foundation
import Hummingbird
import MCUmgr
import SMPBytes
import SMPCore

/// Settings: read one (shown as `mcumgr settings read` shows it: text when printable, else hex),
/// write one (text, or hex bytes), commit, and save to persistent storage.
extension API {
    struct SettingValue: Codable, Sendable {
        var name: String
        /// The value as shown: its text when printable, else hex; `(empty)` when empty.
        var shown: String
        /// Whether ``shown`` is text.
        var isText: Bool
        /// The bytes in hex, always.
        var hex: String
        /// The device returns at most this many bytes of a value, when it says so.
        var maxSize: UInt32?
    }

    struct SettingWrite: Codable, Sendable {
        var name: String?
        var value: String?
        /// `value` is hex bytes, e.g. `0a0b` or `0a:0b`.
        var hex: Bool?
    }

    struct SettingSave: Codable, Sendable { var name: String? }

    /// A setting's name: printable, up to 255 bytes (Zephyr's default limit is 64; the device
    /// says when a name is too long for it).
    static func settingName(_ text: String?) throws(WebError) -> String {
        guard let text, !text.isEmpty else {
            throw WebError(.badRequest, "Setting name: give the setting's name, e.g. app/name")
        }
        guard text.utf8.count <= 255 else { throw WebError(.badRequest, "Setting name: longer than 255 bytes") }
        guard !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw WebError(.badRequest, "Setting name: the name contains control characters")
        }
        return text
    }

    /// A value as written: text, or hex bytes.
    static func settingBytes(_ value: String?, hex: Bool) throws(WebError) -> Data {
        guard let value else { throw WebError(.badRequest, "Value: give the value to write") }
        guard hex else { return Data(value.utf8) }
        guard let bytes = Hex.decode(value) else {
            throw WebError(.badRequest, "Value: '\(value.prefix(40))' is not hex: use pairs of digits 0-9 a-f")
        }
        return Data(bytes)
    }

    func registerSettings(on router: Router<BasicRequestContext>) {
        router.get("/api/devices/:id/settings") { request, context in
            try await answer {
                let session = try await registry.session(context.parameters.require("id"))
                let name = try Self.settingName(request.uri.queryParameters["name"].map(String.init))
                let response = try await session.withClient { try await $0.send(SettingsManagement.Read(name: name)) }
                let text = response.printableText
                return try Self.json(
                    SettingValue(
                        name: name,
                        shown: response.value.isEmpty ? "(empty)" : text ?? Hex.encode(response.value),
                        isText: text != nil,
                        hex: Hex.encode(response.value),
                        maxSize: response.maxSize
                    )
                )
            }
        }
        router.post("/api/devices/:id/settings") { request, context in
            try await answer {
                let session = try await registry.session(context.parameters.require("id"))
                let body = try await Self.body(SettingWrite.self, from: request)
                let name = try Self.settingName(body.name)
                let bytes = try Self.settingBytes(body.value, hex: body.hex ?? false)
                try await session.checkIdle()
                _ = try await session.withClient {
                    try await $0.send(SettingsManagement.Write(name: name, value: bytes))
                }
                return try Self.json(Done(done: "wrote \(name) (\(bytes.count) byte\(bytes.count == 1 ? "" : "s"))"))
            }
        }
        router.post("/api/devices/:id/settings/commit") { _, context in
            try await answer {
                let session = try await registry.session(context.parameters.require("id"))
                try await session.checkIdle()
                _ = try await session.withClient { try await $0.send(SettingsManagement.Commit()) }
                return try Self.json(Done(done: "committed"))
            }
        }
        router.post("/api/devices/:id/settings/save") { request, context in
            try await answer {
                let session = try await registry.session(context.parameters.require("id"))
                let body = try await Self.body(SettingSave.self, from: request)
                let subtree = try body.name.map(Self.settingName)
                try await session.checkIdle()
                _ = try await session.withClient { try await $0.send(SettingsManagement.Save(name: subtree)) }
                return try Self.json(
                    Done(done: subtree.map { "saved \($0) to storage" } ?? "saved settings to storage")
                )
            }
        }
    }
}
