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
