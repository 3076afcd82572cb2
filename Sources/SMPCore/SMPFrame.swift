import Foundation
import SMPBytes
import SMPCBOR

/// A whole SMP message: the 8-byte header and its payload (CBOR for groups 0–63).
public struct SMPFrame: Sendable, Hashable {
    /// The header; its `length` always equals `payload.count`.
    public private(set) var header: SMPHeader
    /// The frame on the wire: header then payload. Stored whole, so parsing a received frame
    /// and decoding its payload copy nothing.
    public let bytes: [UInt8]

    /// The payload bytes (a copy; decoding reads ``bytes`` in place).
    public var payload: [UInt8] { Array(bytes[SMPHeader.size...]) }

    /// The largest payload the 16-bit length field can describe.
    public static let maximumPayloadSize = Int(UInt16.max)

    /// Creates a frame, setting the header's length from the payload.
    /// - Parameters:
    ///   - header: the header; its `length` is replaced.
    ///   - payload: the payload.
    /// - Throws: ``SMPError`` `.frameTooLarge` for a payload over 65535 bytes.
    public init(header: SMPHeader, payload: [UInt8]) throws(SMPError) {
        guard payload.count <= SMPFrame.maximumPayloadSize else {
            throw SMPError.frameTooLarge(
                size: payload.count,
                limit: SMPFrame.maximumPayloadSize,
                "payload of \(payload.count) bytes exceeds the 16-bit length field"
            )
        }
        var header = header
        header.length = UInt16(payload.count)
        self.header = header
        var writer = ByteWriter(capacity: SMPHeader.size + payload.count)
        header.write(into: &writer)
        writer.writeBytes(payload)
        self.bytes = writer.bytes
    }

    /// Parses exactly one frame.
    /// - Parameter bytes: a header and exactly `length` payload bytes.
    /// - Throws: ``SMPError`` `.truncatedHeader` or `.lengthMismatch`.
    public init(parsing bytes: some Collection<UInt8>) throws(SMPError) {
        let all = Array(bytes)
        let header = try SMPHeader(parsingArray: all)
        let expected = SMPHeader.size + Int(header.length)
        guard all.count == expected else {
            throw SMPError(
                .lengthMismatch,
                "header announces \(header.length) payload bytes, \(all.count - SMPHeader.size) present"
            )
        }
        self.header = header
        self.bytes = all
    }

    /// Whether the frame has no payload bytes.
    public var hasPayload: Bool { bytes.count > SMPHeader.size }

    /// The payload as one CBOR item.
    /// - Throws: ``SMPError`` `.malformedPayload` with the `CBORError` as cause.
    public func payloadValue() throws(SMPError) -> CBOR {
        do {
            var reader = CBORReader(bytes, startingAt: SMPHeader.size)
            let value = try reader.readValue()
            guard reader.isAtEnd else { throw CBORError(.trailingBytes, at: reader.offset) }
            return value
        } catch {
            throw SMPError(.malformedPayload, "\(header.group) command \(header.command)", cause: error)
        }
    }

    // MARK: - Building frames

    /// Encodes a request.
    /// - Parameters:
    ///   - request: the request.
    ///   - sequence: the sequence number.
    ///   - version: the header version; v2 unless the device only speaks v1.
    ///   - options: CBOR options; `canonical` reproduces the `smp` package's key order.
    /// - Returns: the frame.
    /// - Throws: ``SMPError`` `.encodingFailed` or `.frameTooLarge`.
    public static func request<R: SMPRequest>(
        _ request: R,
        sequence: UInt8,
        version: SMPVersion = .v2,
        options: CBORWriter.Options = .init()
    ) throws(SMPError) -> SMPFrame {
        let header = SMPHeader(
            version: version,
            operation: R.operation,
            length: 0,
            group: R.group,
            sequence: sequence,
            command: R.command
        )
        do {
            return try SMPFrame(header: header, assembled: request.encodeFrame(header: header, options: options))
        } catch let error as SMPError {
            throw error
        } catch {
            throw SMPError(.encodingFailed, "\(R.group) command \(R.command)", cause: error)
        }
    }

    /// A frame from bytes that hold `header` then the payload, with the length set in place (no
    /// copy of the payload).
    private init(header: SMPHeader, assembled bytes: consuming [UInt8]) throws(SMPError) {
        let count = bytes.count - SMPHeader.size
        guard count <= SMPFrame.maximumPayloadSize else {
            throw SMPError.frameTooLarge(
                size: count,
                limit: SMPFrame.maximumPayloadSize,
                "payload of \(count) bytes exceeds the 16-bit length field"
            )
        }
        var header = header
        header.length = UInt16(count)
        bytes[2] = UInt8(truncatingIfNeeded: count >> 8)
        bytes[3] = UInt8(truncatingIfNeeded: count)
        self.header = header
        self.bytes = bytes
    }

    /// Rewrites the version and sequence number of a frame's bytes in place, for another attempt
    /// of the same request: the payload is not encoded or copied again.
    /// - Parameters:
    ///   - bytes: a frame's bytes (at least the header).
    ///   - version: the protocol version.
    ///   - sequence: the sequence number.
    package static func restamp(_ bytes: inout [UInt8], version: SMPVersion, sequence: UInt8) {
        guard bytes.count >= SMPHeader.size else { return }
        bytes[0] = bytes[0] & 0b1110_0111 | version.rawValue << 3
        bytes[6] = sequence
    }

    /// Encodes a successful response to a request frame (used by the simulated device).
    /// - Parameters:
    ///   - response: the response value.
    ///   - request: the header of the request being answered; group, command, sequence and
    ///     version are copied, and the operation becomes the matching response.
    ///   - options: CBOR options.
    /// - Returns: the frame.
    /// - Throws: ``SMPError`` `.unexpectedOperation` if `request` is not a request, or an encoding error.
    public static func response(
        _ response: some Encodable,
        to request: SMPHeader,
        options: CBORWriter.Options = .init()
    ) throws(SMPError) -> SMPFrame {
        try SMPFrame(header: responseHeader(for: request), payload: encodePayload(response, options: options))
    }

    /// Builds a response frame from a raw CBOR map (error envelopes, hand-shaped answers).
    /// - Parameters:
    ///   - payload: the map.
    ///   - request: the header being answered.
    ///   - options: CBOR options.
    /// - Returns: the frame.
    /// - Throws: ``SMPError`` `.unexpectedOperation` if `request` is not a request.
    public static func response(
        payload: CBOR,
        to request: SMPHeader,
        options: CBORWriter.Options = .init()
    ) throws(SMPError) -> SMPFrame {
        try SMPFrame(header: responseHeader(for: request), payload: CBORWriter.encode(payload, options: options))
    }

    private static func responseHeader(for request: SMPHeader) throws(SMPError) -> SMPHeader {
        guard let operation = request.operation.response else {
            throw SMPError(.unexpectedOperation, "cannot answer a \(request.operation) frame")
        }
        var header = request
        header.operation = operation
        header.flags = 0
        return header
    }

    private static func encodePayload(_ value: some Encodable, options: CBORWriter.Options) throws(SMPError) -> [UInt8]
    {
        do {
            return try CBOREncoder(options: options).encodeToBytes(value)
        } catch {
            throw SMPError(.encodingFailed, "\(type(of: value))", cause: error)
        }
    }

    // MARK: - Reading frames

    /// Decodes this frame as the response to `R`, checking the error envelope first.
    /// - Parameter type: the request type whose response is expected.
    /// - Returns: the decoded response.
    /// - Throws: ``SMPDeviceError`` when the device refused; ``SMPError`` when the frame is not a
    ///   response to `R` or its payload is malformed or of the wrong shape.
    public func decodeResponse<R: SMPRequest>(to type: R.Type) throws -> R.Response {
        guard header.operation == R.operation.response, header.group == R.group, header.command == R.command else {
            throw SMPError(
                .unexpectedOperation,
                "expected \(R.group) command \(R.command) \(R.operation.response?.description ?? "response"), "
                    + "got \(header.group) command \(header.command) \(header.operation)"
            )
        }
        var reader = CBORReader(bytes, startingAt: SMPHeader.size)
        if let quick = R.decodeResponseQuickly(&reader), reader.isAtEnd { return quick }
        let value = try payloadValue()
        try SMPResponseStatus.check(value, group: header.group, command: header.command)
        do {
            return try CBORDecoder().decode(R.Response.self, from: value)
        } catch {
            throw SMPError(.invalidResponse, "\(R.group) command \(R.command): \(error)", cause: error)
        }
    }

    /// Decodes this frame as a request of type `R` (used by the simulated device).
    /// - Parameter type: the request type.
    /// - Returns: the request.
    /// - Throws: ``SMPError`` `.invalidRequest` if the payload does not have `R`'s shape.
    public func decodeRequest<R: SMPRequest>(as type: R.Type) throws(SMPError) -> R {
        do {
            // From bytes, so hot requests with a direct conformance skip the CBOR tree.
            var reader = CBORReader(bytes, startingAt: SMPHeader.size)
            let request = try R.decodePayload(&reader)
            guard reader.isAtEnd else { throw CBORError(.trailingBytes, at: reader.offset) }
            return request
        } catch let error as CBORError {
            throw SMPError(.malformedPayload, "\(header.group) command \(header.command)", cause: error)
        } catch {
            throw SMPError(.invalidRequest, "\(R.group) command \(R.command): \(error)", cause: error)
        }
    }
}

/// Reading the error envelope of a response payload.
public enum SMPResponseStatus {
    /// Throws if a response payload reports an error.
    ///
    /// Success is a map with no `rc`/`err`, or `rc: 0`, or `err.rc: 0`. Every other code, known or
    /// not, is an error. An envelope of the wrong shape (a text `rc`, an `err` without `group`) is
    /// an ``SMPError`` `.invalidResponse`, never success.
    ///
    /// One exception is group-specific: Zephyr's legacy shell (`…SHELL_LEGACY_RC_RETURN_CODE`)
    /// puts the shell command's own exit code in `rc` next to its output `o`, so for the shell
    /// group an `rc` beside `o` is the command's result, not a refusal.
    /// - Parameters:
    ///   - payload: the decoded payload.
    ///   - group: the response's group.
    ///   - command: the response's command.
    /// - Throws: ``SMPDeviceError`` or ``SMPError``.
    public static func check(_ payload: CBOR, group: SMPGroup, command: UInt8) throws {
        guard let map = payload.mapValue else {
            throw SMPError(.invalidResponse, "payload is not a CBOR map")
        }
        var reason: String?
        if let rsn = map["rsn"] {
            guard let text = rsn.stringValue else { throw SMPError(.invalidResponse, "`rsn` is not text") }
            reason = text
        }
        for key in ["err", "ret"] {
            guard let envelope = map[key] else { continue }
            // A shell response's `ret` is the command's exit code (an integer), not an envelope.
            if key == "ret" && envelope.mapValue == nil { continue }
            guard
                let groupValue = envelope["group"]?.uint64Value, let groupID = UInt16(exactly: groupValue),
                let rcValue = envelope["rc"]?.int64Value, let rc = Int(exactly: rcValue)
            else {
                throw SMPError(.invalidResponse, "`\(key)` is not {group: uint, rc: int}")
            }
            if rc != 0 {
                throw SMPDeviceError(
                    .group(SMPGroup(rawValue: groupID), rc),
                    requestGroup: group,
                    command: command,
                    reason: reason,
                    payload: payload
                )
            }
        }
        if let rcItem = map["rc"] {
            guard let rcValue = rcItem.int64Value, let rc = Int(exactly: rcValue) else {
                throw SMPError(.invalidResponse, "`rc` is not an integer")
            }
            let isLegacyShellResult = group == .shell && map["o"] != nil
            if rc != 0 && !isLegacyShellResult {
                throw SMPDeviceError(
                    .management(SMPReturnCode(rawValue: rc)),
                    requestGroup: group,
                    command: command,
                    reason: reason,
                    payload: payload
                )
            }
        }
    }
}
