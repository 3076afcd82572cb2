import ArgumentParser
import Foundation
import MCUboot
import SMPBytes
import SMPCore
import SMPPOSIX

/// Small pieces the group commands share: tables, hex and number arguments, JSON output.
enum CommandSupport {
    /// Renders rows under a header as aligned columns separated by two spaces; columns listed in
    /// `rightAligned` (numbers) are aligned right. Trailing spaces are trimmed; an empty header
    /// is left out.
    static func table(_ header: [String], _ rows: [[String]], rightAligned: Set<Int> = []) -> [String] {
        let all = header.isEmpty ? rows : [header] + rows
        let columns = all.map(\.count).max() ?? 0
        var widths = Array(repeating: 0, count: columns)
        for row in all {
            for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) }
        }
        return all.map { row in
            var line = ""
            for (index, cell) in row.enumerated() {
                let pad = String(repeating: " ", count: widths[index] - cell.count)
                line += (index == 0 ? "" : "  ") + (rightAligned.contains(index) ? pad + cell : cell + pad)
            }
            while line.hasSuffix(" ") { line.removeLast() }
            return line
        }
    }

    /// Parses hex typed by a user (spaces, colons and `0x` allowed).
    /// - Throws: `ValidationError` naming the argument.
    static func hex(_ text: String, what: String) throws -> Data {
        guard let bytes = Hex.decode(text) else {
            throw ValidationError("\(what) '\(text.prefix(70))' is not hex: use pairs of digits 0-9 a-f")
        }
        return Data(bytes)
    }

    /// Parses a non-negative integer written in decimal or with `0x`.
    static func unsigned(_ text: String) -> UInt64? {
        let lowered = text.lowercased()
        if lowered.hasPrefix("0x") { return UInt64(lowered.dropFirst(2), radix: 16) }
        return UInt64(lowered)
    }

    /// The help of every `--window` option.
    static let windowHelp = ArgumentHelp(
        "Requests in flight at once (default: the device's buf_count − 1; shrinks on back-pressure either way).",
        valueName: "n"
    )

    /// Checks a `--window` value.
    /// - Throws: `ValidationError` outside 1…64.
    static func checkWindow(_ window: Int?) throws {
        if let window, !(1...64).contains(window) { throw ValidationError("--window must be from 1 to 64") }
    }

    /// The help of every `--alignment` option (`image upload`, `upgrade`).
    static let alignmentHelp = ArgumentHelp(
        "Round upload chunks down to a multiple of this many bytes, the device's flash write alignment: 1, 2, 4, … 256.",
        valueName: "bytes"
    )

    /// Checks an `--alignment` value: flash write sizes are powers of two, and beyond 256 a
    /// chunk would no longer fit the smallest devices' buffers.
    /// - Throws: `ValidationError` unless a power of two from 1 to 256.
    static func checkAlignment(_ alignment: Int) throws {
        guard (1...256).contains(alignment), alignment & (alignment - 1) == 0 else {
            throw ValidationError("--alignment must be a power of two from 1 to 256 (1, 2, 4, 8, 16, …)")
        }
    }

    /// Prints one JSON document on stdout.
    static func emit(_ value: JSONValue) {
        Console.out(value.rendered())
    }

    /// Prints a response as the device sent it: keys are its wire names.
    /// - Parameter response: the decoded response.
    /// - Throws: an encoding error (not for the SMPCore response types).
    static func emit(response: some Encodable) throws {
        emit(try JSONValue(encoding: response))
    }

    /// Prints what a command asked, for a write whose answer carries no fields: the request's
    /// fields, keys = wire names.
    /// - Parameter request: the request sent.
    /// - Throws: an encoding error (not for the SMPCore request types).
    static func emit(request: some Encodable) throws {
        emit(try JSONValue(encoding: request))
    }

    /// Prints a request and its answer as one object, keys = wire names: the request's fields
    /// (what was asked, such as a file's name, which the answer does not repeat), then the
    /// response's, the device's value replacing a request field of the same name.
    /// - Parameters:
    ///   - request: the request sent.
    ///   - response: the device's answer.
    /// - Throws: an encoding error (not for the SMPCore types).
    static func emit(request: some Encodable, response: some Encodable) throws {
        emit(try JSONValue(encoding: request).merging(try JSONValue(encoding: response)))
    }

    /// Prints text that may end with a newline as lines (a final newline does not make an empty
    /// line).
    static func emitText(_ text: String) {
        guard !text.isEmpty else { return }
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        for line in lines { Console.out(line.hasSuffix("\r") ? String(line.dropLast()) : line) }
    }

    /// A JSON integer.
    static func int(_ value: some BinaryInteger) -> JSONValue {
        if let signed = Int64(exactly: value) { return .int(signed) }
        return .uint(UInt64(clamping: value))
    }
}

/// Reads a whole local file, with an error that names it.
/// - Throws: ``InputFileError`` when it is missing, a folder or unreadable.
func readLocalFile(_ path: String) throws -> Data {
    var isDirectory: ObjCBool = false
    if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
        throw InputFileError(.unreadable, "\(path) is a folder, not a file")
    }
    do {
        return try LocalFile.read(URL(fileURLWithPath: path), mapped: true)
    } catch {
        throw InputFileError(.unreadable, "cannot read \(path): \(FileErrorReason.describe(error))")
    }
}

/// Reads and parses a firmware package, with errors that name the file.
/// - Throws: ``InputFileError``: unreadable (66), or not a package (65).
func loadPackage(_ path: String) throws -> FirmwarePackage {
    let data = try readLocalFile(path)
    let name = (path as NSString).lastPathComponent
    guard !data.isEmpty else { throw InputFileError(.badData, "\(name): empty file") }
    do {
        return try FirmwarePackage(data: data, fileName: name)
    } catch {
        // `FirmwarePackage(data:)` throws `MCUbootError` only (typed throws).
        throw InputFileError(.badData, packageProblem(error, name: name))
    }
}

/// What is wrong with a package, naming the file once. The error's `cause` (a zip or CBOR
/// library's error) is left out: its text names library types, and the message says enough.
func packageProblem(_ error: MCUbootError, name: String) -> String {
    let detail = error.message.isEmpty ? "\(error.code)" : error.message
    return detail.hasPrefix(name) ? detail : "\(name): \(detail)"
}

/// A local file a command needs that is missing or unreadable (exit status 66), or input data
/// (a file, a key, `decode`'s bytes) that is not what it must be (65).
struct InputFileError: ExitStatusReporting, CustomStringConvertible {
    /// Which.
    enum Kind {
        /// Missing, a folder, no permission: exit status 66.
        case unreadable
        /// Read, but not an image, a package or a key: exit status 65.
        case badData
    }

    var kind: Kind
    var description: String

    init(_ kind: Kind, _ description: String) {
        self.kind = kind
        self.description = description
    }

    var failureReport: FailureReport {
        switch kind {
        case .unreadable: FailureReport(status: .unreadableInput, kind: "unreadable_input", message: description)
        case .badData: FailureReport(status: .badInput, kind: "bad_input", message: description)
        }
    }
}

/// The device's refusal, said in what it means for what the user asked (no such statistics
/// group, the slot another image holds): exit status 1, kind `device_refused`.
struct DeviceRefusal: ExitStatusReporting, CustomStringConvertible {
    var description: String
    /// The refusal itself.
    var cause: SMPDeviceError
    init(_ description: String, cause: SMPDeviceError) {
        self.description = description
        self.cause = cause
    }

    var failureReport: FailureReport { FailureReport(status: .failed, kind: "device_refused", message: description) }
}

/// A failure of a command that is neither a usage error nor the device's refusal (a local file
/// that cannot be read or written, a package without what the command needs): exit status 1.
struct CommandFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
