import Foundation
import Hummingbird
import MCUmgr
import SMPBytes
import SMPCBOR
import SMPCore

/// Raw: any group, command and operation with a JSON body (sent as CBOR); answers the request
/// frame's bytes and the answer, both also decoded as `mcumgr decode` shows them
/// (`SMPCaptureItem`, shared with the command line).
extension API {
    struct RawRequest: Codable, Sendable {
        var group: Int?
        var command: Int?
        /// `read` or `write`.
        var operation: String?
        /// The payload as JSON text; an object (SMP payloads are maps). Empty means `{}`.
        var body: String?
    }

    struct RawAnswer: Codable, Sendable {
        /// The request frame as sent, in hex.
        var requestHex: String
        /// The request, as `mcumgr decode` shows it.
        var request: String
        /// The answer frame, in hex.
        var responseHex: String
        /// The answer, as `mcumgr decode` shows it.
        var response: String
    }

    /// The frame the raw view asks for, checked field by field.
    /// - Throws: `WebError` 400 naming the field.
    static func rawFrame(_ body: RawRequest) throws(WebError) -> SMPFrame {
        guard let group = body.group else { throw WebError(.badRequest, "Group: give a group id, 0 to 65535") }
        guard (0...Int(UInt16.max)).contains(group) else {
            throw WebError(.badRequest, "Group: \(group) is not between 0 and 65535")
        }
        guard let command = body.command else { throw WebError(.badRequest, "Command: give a command id, 0 to 255") }
        guard (0...Int(UInt8.max)).contains(command) else {
            throw WebError(.badRequest, "Command: \(command) is not between 0 and 255")
        }
        let operation: SMPOperation
        switch body.operation ?? "read" {
        case "read": operation = .read
        case "write": operation = .write
        case let other: throw WebError(.badRequest, "Operation: '\(other)' is not one of read, write")
        }
        let text = body.body ?? ""
        // No body is an empty map, as for commands without fields.
        let value: JSONBody
        if text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            value = .object([:])
        } else {
            value = try JSONBody.parse(text)
        }
        guard case .object = value else {
            throw WebError(.badRequest, #"Body (JSON): an SMP payload is a JSON object, e.g. {"d": "hi"}"#)
        }
        let header = SMPHeader(
            version: .v2,
            operation: operation,
            length: 0,
            group: SMPGroup(rawValue: UInt16(group)),
            sequence: 0,
            command: UInt8(command)
        )
        do {
            return try SMPFrame(header: header, payload: CBORWriter.encode(value.cbor))
        } catch {
            throw WebError(.contentTooLarge, "Body (JSON): \(error)")
        }
    }

    /// A frame as `mcumgr decode` shows it; a payload that is no CBOR is said so.
    static func decoded(_ frame: SMPFrame) -> String {
        do {
            return try SMPCaptureItem.frame(frame).text()
        } catch {
            return "cannot decode: \(error)"
        }
    }

    func registerRaw(on router: Router<BasicRequestContext>) {
        router.post("/api/devices/:id/raw") { request, context in
            try await answer {
                let session = try await registry.session(context.parameters.require("id"))
                let frame = try Self.rawFrame(try await Self.body(RawRequest.self, from: request))
                // Nothing says what a raw request changes: not while an operation runs.
                try await session.checkIdle()
                let exchange = try await session.withClient { try await $0.exchange(frame) }
                return try Self.json(
                    RawAnswer(
                        requestHex: Hex.encode(exchange.request.bytes),
                        request: Self.decoded(exchange.request),
                        responseHex: Hex.encode(exchange.response.bytes),
                        response: Self.decoded(exchange.response)
                    )
                )
            }
        }
    }
}
