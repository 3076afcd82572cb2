import ArgumentParser
import Foundation
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
            otherwise a single CBOR item. With - as the only argument the hex is read from \
            standard input (line breaks allowed), e.g. from a capture: mcumgr decode - < frame.hex
            """
    )

    @OptionGroup var global: LocalOptions

    @Argument(help: "The bytes, in hex; - reads the hex from standard input.")
    var hex: [String]

    func validate() throws {
        try global.refuseClientOptions(command: "decode")
    }

    func run() throws {
        let bytes = try inputBytes()
        let documents: [Document]
        do {
            documents = try DecodeCommand.decode(bytes)
        } catch let error as SMPError {
            throw InputFileError(.badData, "cannot decode: \(error)")
        }
        for document in documents {
            if global.json {
                Console.out(document.json.rendered())
            } else {
                Console.out(document.text)
            }
        }
    }

    /// The bytes given on the command line, or on standard input with `-`.
    /// - Throws: `InputFileError(.badData)` for what is not hex. What is given here is the data
    ///   itself: what cannot be decoded is bad input data (status 65), not a usage error and not
    ///   a device's malformed answer.
    private func inputBytes() throws -> [UInt8] {
        let fromStandardInput = hex == ["-"]
        let text: String
        if fromStandardInput {
            let data = Console.input.readAll()
            guard let read = String(data: data, encoding: .utf8) else {
                throw InputFileError(.badData, "standard input is not hex text (it is not even UTF-8)")
            }
            // Line breaks of a capture file become spaces, which Hex.decode skips (it does not
            // skip a lone "\n": its separator list holds "\r\n" as one Character).
            text = read.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        } else {
            text = hex.joined(separator: " ")
        }
        guard let bytes = Hex.decode(text), !bytes.isEmpty else {
            let shown = text.trimmingCharacters(in: .whitespacesAndNewlines).prefix(40)
            let source = fromStandardInput ? "standard input" : "'\(shown)'"
            throw InputFileError(
                .badData,
                shown.isEmpty ? "\(source) is empty" : "\(source) is not hex: use pairs of digits 0-9 a-f"
            )
        }
        return bytes
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
            throw InputFileError(
                .badData,
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
