import Foundation
import Hummingbird
import MCUmgr
import MCUmgrDFU
import SMPBytes
import SMPCore

/// Images: the slot table, and test, confirm and erase with the command line's guards
/// (`ImageStateGuard`): nothing changes that was not asked for, and a refusal says what holds
/// the slot and the commands that clear it, in the same words as `mcumgr image`.
extension API {
    struct Slot: Codable, Sendable {
        var image: Int
        var slot: Int
        var version: String
        var hash: String?
        var flags: [String]
    }

    struct Images: Codable, Sendable {
        var images: [Slot]
    }

    struct HashRequest: Codable, Sendable { var hash: String? }
    struct EraseRequest: Codable, Sendable { var slot: UInt32? }

    static func images(_ response: ImageManagement.StateRead.Response) -> Images {
        Images(images: response.images.map(slot))
    }

    /// One slot as the table shows it (the Images screen, and the Simulator screen's flash).
    static func slot(_ state: ImageManagement.SlotState) -> Slot {
        Slot(
            image: Int(state.imageNumber),
            slot: Int(state.slot),
            version: state.version,
            hash: state.hash.map { Hex.encode($0) },
            flags: state.flagNames
        )
    }

    /// A command line the user can type, with this device's URL.
    static func command(_ url: String) -> @Sendable (String) -> String {
        let safe = url.allSatisfy { $0.isLetter || $0.isNumber || "-_./:@%+=,".contains($0) }
        let quoted = safe ? url : "'" + url.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
        return { "mcumgr --conn \(quoted) \($0)" }
    }

    /// The hash the user gave: hex, whole or a unique prefix.
    static func hashBytes(_ text: String) throws(WebError) -> Data {
        guard let bytes = Hex.decode(text), !bytes.isEmpty else {
            throw WebError(.badRequest, "hash '\(text)' is not hexadecimal")
        }
        return Data(bytes)
    }

    func registerImages(on router: Router<BasicRequestContext>) {
        router.get("/api/devices/:id/images") { _, context in
            try await answer {
                let session = try await registry.session(context.parameters.require("id"))
                let response = try await session.withClient { try await $0.send(ImageManagement.StateRead()) }
                return try Self.json(Self.images(response))
            }
        }
        router.post("/api/devices/:id/images/test") { request, context in
            try await answer {
                let session = try await registry.session(context.parameters.require("id"))
                try await session.checkIdle()
                let body = try await Self.body(HashRequest.self, from: request)
                guard let text = body.hash else { throw WebError(.badRequest, "'hash' is missing: test which image?") }
                let bytes = try Self.hashBytes(text)
                let response = try await session.withClient { client in
                    let hash = try await ImageStateGuard.resolveHash(bytes, client: client)
                    return try await client.send(ImageManagement.StateWrite(hash: hash, confirm: false))
                }
                return try Self.json(Self.images(response))
            }
        }
        router.post("/api/devices/:id/images/confirm") { request, context in
            try await answer {
                let session = try await registry.session(context.parameters.require("id"))
                try await session.checkIdle()
                let body = try await Self.body(HashRequest.self, from: request)
                let bytes = try body.hash.map(Self.hashBytes)
                let response = try await session.withClient { client in
                    // Without a hash: the running image, as `mcumgr image confirm` does.
                    var hash: Data?
                    if let bytes { hash = try await ImageStateGuard.resolveHash(bytes, client: client) }
                    return try await client.send(ImageManagement.StateWrite(hash: hash, confirm: true))
                }
                return try Self.json(Self.images(response))
            }
        }
        router.post("/api/devices/:id/images/erase") { request, context in
            try await answer {
                let session = try await registry.session(context.parameters.require("id"))
                try await session.checkIdle()
                let body = try await Self.body(EraseRequest.self, from: request)
                let url = session.url
                let response = try await session.withClient { client in
                    do {
                        _ = try await client.send(ImageManagement.Erase(slot: body.slot))
                    } catch let refusal as SMPDeviceError {
                        throw await ImageStateGuard.explain(
                            refusal,
                            image: 0,
                            slot: body.slot.map(Int.init),
                            client: client,
                            command: Self.command(url),
                            then: "erase again"
                        ) ?? refusal
                    }
                    return try await client.send(ImageManagement.StateRead())
                }
                return try Self.json(Self.images(response))
            }
        }
    }
}
