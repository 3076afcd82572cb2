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

    /// The items of a capture (read by `SMPCaptureItem`, which the web page's raw view shares),
    /// each with its JSON form and its text.
    static func decode(_ bytes: [UInt8]) throws -> [Document] {
        let items: [SMPCaptureItem]
        do {
            items = try SMPCaptureItem.decode(bytes)
        } catch let error as SMPCaptureError {
            throw InputFileError(.badData, error.description)
        }
        return try items.map { item in
            let json: JSONValue
            switch item {
            case .console(let line): json = .object([("console", .string(line))])
            case .cbor(let value): json = .object([("cbor", JSONValue(value))])
            case .frame(let frame): json = try frameJSON(frame)
            }
            return Document(json: json, text: try item.text())
        }
    }

    private static func frameJSON(_ frame: SMPFrame) throws -> JSONValue {
        let header = frame.header
        let payloadJSON: JSONValue = frame.hasPayload ? JSONValue(try frame.payloadValue()) : .null
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
        return .object([("header", headerJSON), ("payload", payloadJSON)])
    }
}
