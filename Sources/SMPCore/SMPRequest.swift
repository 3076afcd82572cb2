import SMPBytes
import SMPCBOR

/// An SMP request bound at compile time to its group, command, operation and response type.
///
/// Adding a command means adding one conforming struct to its group's file: there is no
/// registry to update. Requests and responses are `Codable` both ways because the client
/// encodes requests and decodes responses while the simulated device does the opposite.
///
/// ## Implementing
/// Give the struct the wire keys in `CodingKeys`, make optional fields Swift optionals (they are
/// then omitted, as the `smp` package omits `None`), and nest its `Response`. Responses never
/// declare `rc` or `err`: the envelope is checked by ``SMPFrame/decodeResponse(to:)`` first.
///
/// ```swift
/// public struct Echo: SMPWriteRequest {
///     public static var group: SMPGroup { .os }
///     public static var command: UInt8 { 0 }
///     public var text: String
///     enum CodingKeys: String, CodingKey { case text = "d" }
///     public struct Response: Codable, Sendable, Hashable { … }
/// }
/// ```
public protocol SMPRequest: Codable, Sendable {
    /// What the device answers with on success.
    associatedtype Response: Codable, Sendable
    /// The management group.
    static var group: SMPGroup { get }
    /// The command id within the group.
    static var command: UInt8 { get }
    /// Read or write; fixed by ``SMPReadRequest`` / ``SMPWriteRequest``.
    static var operation: SMPOperation { get }

    /// Whether sending the request twice does what sending it once does. Only such requests are
    /// sent again after a timeout; a reset, a shell command, an erase or a crash is sent once,
    /// and when its answer is lost the outcome is unknown (the caller reconciles by reading the
    /// device's state). Chunks that carry their offset are idempotent: the device answers a
    /// repeated one with the offset it expects. Provided: `true`.
    var isIdempotent: Bool { get }

    /// The CBOR payload of this request. Provided: the Codable encoding, or the direct one for
    /// types that conform to `CBORDirectEncodable` (chosen statically, no dynamic casts).
    /// - Parameter options: CBOR options.
    func encodePayload(options: CBORWriter.Options) throws -> [UInt8]

    /// The whole frame in one buffer: `header`'s 8 bytes, then the payload. The header's length
    /// is whatever `header` says; ``SMPFrame/request(_:sequence:version:options:)`` sets it.
    /// Provided: the payload encoded behind the header; for `CBORDirectEncodable` types, encoded
    /// in place (the hot path: an upload chunk's data is copied once, into the frame).
    /// - Parameters:
    ///   - header: the header to start with.
    ///   - options: CBOR options.
    func encodeFrame(header: SMPHeader, options: CBORWriter.Options) throws -> [UInt8]

    /// Decodes a success answer straight from the payload's bytes when it has a shape the request
    /// knows, with no error envelope (the hot path of transfers: an upload chunk's `{off: N}`);
    /// `nil` leaves the answer to the general path (the tree, the error envelope, Codable), which
    /// also reports anything malformed. Provided: `nil`.
    /// - Parameter reader: positioned at the payload.
    static func decodeResponseQuickly(_ reader: inout CBORReader) -> Response?

    /// Decodes a request payload (one CBOR item). Provided: Codable, or the direct reader for
    /// `CBORDirectDecodable` types.
    /// - Parameter reader: positioned at the payload.
    static func decodePayload(_ reader: inout CBORReader) throws -> Self
}

extension SMPRequest {
    public var isIdempotent: Bool { true }

    public func encodePayload(options: CBORWriter.Options) throws -> [UInt8] {
        try CBOREncoder(options: options).encodeToBytes(self)
    }

    public static func decodeResponseQuickly(_ reader: inout CBORReader) -> Response? { nil }

    public func encodeFrame(header: SMPHeader, options: CBORWriter.Options) throws -> [UInt8] {
        let payload = try encodePayload(options: options)
        var writer = ByteWriter(capacity: SMPHeader.size + payload.count)
        header.write(into: &writer)
        writer.writeBytes(payload)
        return writer.bytes
    }

    public static func decodePayload(_ reader: inout CBORReader) throws -> Self {
        try CBORDecoder().decode(Self.self, from: reader.readValue())
    }
}

extension SMPRequest where Self: CBORDirectEncodable {
    public func encodePayload(options: CBORWriter.Options) throws -> [UInt8] {
        // Sorted keys need the tree; insertion order streams straight into the writer.
        guard options.mapKeyOrder == .insertion else { return try CBOREncoder(options: options).encodeToBytes(self) }
        var writer = CBORWriter(options: options, capacity: encodedSizeHint)
        encodeCBOR(into: &writer)
        return writer.bytes
    }

    public func encodeFrame(header: SMPHeader, options: CBORWriter.Options) throws -> [UInt8] {
        guard options.mapKeyOrder == .insertion else {
            let payload = try encodePayload(options: options)
            var writer = ByteWriter(capacity: SMPHeader.size + payload.count)
            header.write(into: &writer)
            writer.writeBytes(payload)
            return writer.bytes
        }
        var prefix = ByteWriter(capacity: SMPHeader.size + encodedSizeHint)
        header.write(into: &prefix)
        var writer = CBORWriter(options: options, continuing: prefix)
        encodeCBOR(into: &writer)
        return writer.bytes
    }
}

extension SMPRequest where Self: CBORDirectDecodable {
    public static func decodePayload(_ reader: inout CBORReader) throws -> Self {
        try Self(cbor: &reader)
    }
}

/// A request sent with the read operation (0); its answer has operation 1.
public protocol SMPReadRequest: SMPRequest {}

extension SMPReadRequest {
    /// Always ``SMPOperation/read``.
    public static var operation: SMPOperation { .read }
}

/// A request sent with the write operation (2); its answer has operation 3.
public protocol SMPWriteRequest: SMPRequest {}

extension SMPWriteRequest {
    /// Always ``SMPOperation/write``.
    public static var operation: SMPOperation { .write }
}

/// The response of a command whose success carries no fields (`{}`).
public struct SMPEmptyResponse: Codable, Sendable, Hashable {
    /// Creates the empty response.
    public init() {}
}
