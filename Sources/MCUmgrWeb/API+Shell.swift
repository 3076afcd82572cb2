import Foundation
import Hummingbird
import MCUmgr
import SMPCore

/// Shell: runs one command line in the device's shell (`mcumgr shell exec`), answering its
/// output and return code; the page keeps the terminal and its history.
extension API {
    struct ShellRequest: Codable, Sendable { var command: String? }
    struct ShellAnswer: Codable, Sendable {
        var command: String
        var output: String
        var returnCode: Int?
        /// The command line's line when the command returned non-zero.
        var failure: String?
    }

    /// The longest command line taken; longer than any device's buffer (the device's own limit
    /// is checked by the client before sending).
    static let maximumCommandLength = 4096

    /// A command line split into words at spaces; double or single quotes keep spaces in a word.
    /// - Parameter text: the line typed.
    /// - Returns: the words, at least one.
    /// - Throws: `WebError` 400 for an empty line, an unclosed quote, control characters.
    static func shellWords(_ text: String?) throws(WebError) -> [String] {
        guard let text, !text.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw WebError(.badRequest, "Command: give the shell command to run, e.g. kernel version")
        }
        guard text.utf8.count <= maximumCommandLength else {
            throw WebError(.badRequest, "Command: longer than \(maximumCommandLength) bytes")
        }
        guard !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control && $0 != "\t" }) else {
            throw WebError(.badRequest, "Command: the line contains control characters")
        }
        var words: [String] = []
        var word: String?
        var quote: Character?
        for character in text {
            if let open = quote {
                if character == open { quote = nil } else { word = (word ?? "") + String(character) }
            } else if character == "\"" || character == "'" {
                quote = character
                word = word ?? ""
            } else if character == " " || character == "\t" {
                if let done = word { words.append(done) }
                word = nil
            } else {
                word = (word ?? "") + String(character)
            }
        }
        guard quote == nil else { throw WebError(.badRequest, "Command: a quote is not closed") }
        if let done = word { words.append(done) }
        return words
    }

    func registerShell(on router: Router<BasicRequestContext>) {
        router.post("/api/devices/:id/shell") { request, context in
            try await answer {
                let session = try await registry.session(context.parameters.require("id"))
                let body = try await Self.body(ShellRequest.self, from: request)
                let words = try Self.shellWords(body.command)
                // A shell command may change anything: not while an operation runs.
                try await session.checkIdle()
                let response = try await session.withClient {
                    try await $0.send(ShellManagement.Execute(arguments: words))
                }
                let line = words.joined(separator: " ")
                return try Self.json(
                    ShellAnswer(
                        command: line,
                        output: response.output,
                        returnCode: response.returnCode,
                        failure: response.failureLine(command: line)
                    )
                )
            }
        }
    }
}
