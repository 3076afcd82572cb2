import ArgumentParser
import SMPBytes
import SMPCBOR
import SMPCore

/// `mcumgr decode HEX`: shows what an SMP frame, a run of frames, console-framed serial
/// lines, or bare CBOR from a capture contains.
struct DecodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode",
        abstract: "Decode an SMP frame, serial console lines or bare CBOR given in hex.",
        discussion: """
            The input may be split over several arguments and may contain spaces, colons or 0x \
            prefixes. It is read as: serial console lines when it starts with 06 09; otherwise \
            one or more SMP frames back to back when the header lengths account for every byte; \
            otherwise a single CBOR item.
            """
    )

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The bytes, in hex.")
    var hex: [String]

    func run() throws {
        let text = hex.joined(separator: " ")
        guard let bytes = Hex.decode(text), !bytes.isEmpty else {
            throw ValidationError("'\(text.prefix(40))' is not hex: use pairs of digits 0-9 a-f")
        }
        let documents: [Document]
        do {
            documents = try DecodeCommand.decode(bytes)
        } catch let error as SMPError {
            // The bytes come from the user, not from a device: report them as bad input.
            throw ValidationError("cannot decode: \(error)")
        }
        for document in documents {
            if global.json {
                Console.out(document.json.rendered())
            } else {
                Console.out(document.text)
            }
        }
    }

    /// One decoded item: a frame, a console line, or bare CBOR.
    struct Document {
        var json: JSONValue
        var text: String
    }

    static func decode(_ bytes: [UInt8]) throws -> [Document] {
        if bytes.starts(with: SerialFraming.startMarker) {
            var decoder = SerialFrameDecoder()
            var events = decoder.feed(bytes)
            if bytes.last != 0x0a { events += decoder.feed([0x0a]) }
            return try events.map { event in
                switch event {
                case .frame(let frame): return try document(for: SMPFrame(parsing: frame))
                case .console(let line):
                    let text = String(decoding: line, as: UTF8.self)
                    return Document(json: .object([("console", .string(text))]), text: "console: \(text)")
                case .discarded(let error): throw error
                }
            }
        }
        if let frames = splitFrames(bytes) {
            return try frames.map { try document(for: SMPFrame(parsing: $0)) }
        }
        do {
            let value = try CBORReader.decode(bytes)
            return [Document(json: .object([("cbor", JSONValue(value))]), text: value.diagnostic())]
        } catch {
            throw ValidationError(
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

    private static func document(for frame: SMPFrame) throws -> Document {
        let header = frame.header
        var payloadJSON: JSONValue = .null
        var payloadText = "(no payload)"
        if !frame.payload.isEmpty {
            let value = try frame.payloadValue()
            payloadJSON = JSONValue(value)
            payloadText = value.diagnostic()
        }
        let headerJSON: JSONValue = .object([
            ("version", .uint(UInt64(header.version.rawValue) + 1)),
            ("op", .string(header.operation.description)),
            ("flags", .uint(UInt64(header.flags))),
            ("length", .uint(UInt64(header.length))),
            ("group", .uint(UInt64(header.group.rawValue))),
            ("group_name", .string(header.group.name)),
            ("sequence", .uint(UInt64(header.sequence))),
            ("command", .uint(UInt64(header.command))),
        ])
        var status = ""
        if header.operation.isResponse, !frame.payload.isEmpty, let value = try? frame.payloadValue() {
            do {
                try SMPResponseStatus.check(value, group: header.group, command: header.command)
            } catch {
                status = "\nstatus: \(error)"
            }
        }
        let text = """
            header: SMP \(header.version) \(header.operation), group \(header.group.rawValue) (\(header.group.name)), \
            command \(header.command), sequence \(header.sequence), flags \(header.flags), length \(header.length)
            payload: \(payloadText)\(status)
            """
        return Document(json: .object([("header", headerJSON), ("payload", payloadJSON)]), text: text)
    }
}
