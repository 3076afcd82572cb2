import SMPBytes
import SMPCBOR

/// One item of a capture as `mcumgr decode` reads it: an SMP frame, a console line of a serial
/// link, or bare CBOR. Here, not in the command, so every tool that shows frames (the command
/// line's `decode`, the web page's raw view) reads and words them the same way.
public enum SMPCaptureItem: Sendable, Hashable {
    /// A whole SMP frame.
    case frame(SMPFrame)
    /// A line of console output between the serial link's frames.
    case console(String)
    /// A single CBOR item that is no frame.
    case cbor(CBOR)

    /// Splits bytes into items: serial console lines when they start with `06 09`; otherwise one
    /// or more SMP frames back to back when the header lengths account for every byte; otherwise
    /// a single CBOR item.
    /// - Parameter bytes: the captured bytes.
    /// - Returns: the items, in order.
    /// - Throws: ``SMPError`` for a serial frame that does not decode (bad CRC, base64…);
    ///   ``SMPCaptureError`` when the bytes are neither frames nor CBOR.
    public static func decode(_ bytes: [UInt8]) throws -> [SMPCaptureItem] {
        if bytes.starts(with: SerialFraming.startMarker) {
            var decoder = SerialFrameDecoder()
            var events = decoder.feed(bytes)
            // A capture may stop without the final line break; the last line still counts.
            if bytes.last != 0x0a { events += decoder.feed([0x0a]) }
            return try events.map { event in
                switch event {
                case .frame(let frame): return .frame(try SMPFrame(parsing: frame))
                case .console(let line): return .console(String(decoding: line, as: UTF8.self))
                case .discarded(let error): throw error
                }
            }
        }
        if let frames = splitFrames(bytes) {
            return try frames.map { .frame(try SMPFrame(parsing: $0)) }
        }
        do {
            return [.cbor(try CBORReader.decode(bytes))]
        } catch {
            throw SMPCaptureError(
                "neither an SMP frame (header length does not match the \(bytes.count) bytes) nor CBOR: \(error)"
            )
        }
    }

    /// Frames back to back whose header lengths cover the input exactly, or `nil`.
    private static func splitFrames(_ bytes: [UInt8]) -> [ArraySlice<UInt8>]? {
        var frames: [ArraySlice<UInt8>] = []
        var start = 0
        while start < bytes.count {
            guard let header = try? SMPHeader(parsing: bytes[start...]), header.version.rawValue <= 1 else {
                return nil
            }
            let end = start + SMPHeader.size + Int(header.length)
            guard end <= bytes.count else { return nil }
            frames.append(bytes[start..<end])
            start = end
        }
        return frames.isEmpty ? nil : frames
    }

    /// The item for people, as `mcumgr decode` prints it: a frame's header line, its payload in
    /// CBOR diagnostic notation and, for an answer that reports an error, its status.
    /// - Throws: ``SMPError`` `.malformedPayload` for a frame whose payload is not CBOR.
    public func text() throws(SMPError) -> String {
        switch self {
        case .console(let line): return "console: \(line)"
        case .cbor(let value): return value.diagnostic()
        case .frame(let frame): return try Self.text(frame)
        }
    }

    private static func text(_ frame: SMPFrame) throws(SMPError) -> String {
        let header = frame.header
        var payloadText = "(no payload)"
        var status = ""
        if frame.hasPayload {
            let value = try frame.payloadValue()
            payloadText = value.diagnostic()
            if header.operation.isResponse {
                do {
                    try SMPResponseStatus.check(value, group: header.group, command: header.command)
                } catch {
                    status = "\nstatus: \(error)"
                }
            }
        }
        return """
            header: SMP \(header.version) \(header.operation), group \(header.group.rawValue) (\(header.group.name)), \
            command \(header.command), sequence \(header.sequence), flags \(header.flags), length \(header.length)
            payload: \(payloadText)\(status)
            """
    }
}

/// Bytes that are neither SMP frames nor CBOR; the message says what was tried.
public struct SMPCaptureError: Error, Sendable, CustomStringConvertible {
    /// The line for people.
    public var description: String

    /// Creates the error.
    /// - Parameter description: the line for people.
    public init(_ description: String) { self.description = description }
}
