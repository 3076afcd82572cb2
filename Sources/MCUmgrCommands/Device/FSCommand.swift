import ArgumentParser
import Foundation
import MCUboot
import MCUmgr
import SMPBytes
import SMPCore
import SMPLink
import SMPPOSIX

/// `mcumgr fs upload|download|status|hash|types|close`: the file-system group (8).
struct FSCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fs",
        abstract: "File system: upload, download, status, hash, types, close.",
        subcommands: [Upload.self, Download.self, Status.self, Hash.self, Types.self, Close.self]
    )

    /// Runs a transfer's progress stream through a view, ending the bar whatever happens. An
    /// interrupted file transfer starts over when run again: an upload carries no hash by which
    /// the device could resume it, and a download is written only once complete.
    static func finishing<T>(_ view: inout TransferProgressView, _ body: (inout TransferProgressView) async throws -> T)
        async throws -> T
    {
        do {
            let result = try await body(&view)
            view.finish()
            return result
        } catch {
            throw view.ending(error, resumes: false)
        }
    }

    struct Upload: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Upload a local file to the device (it is created or overwritten)."
        )
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The local file.") var local: String
        @Argument(help: "The path on the device, e.g. /lfs1/config.txt.") var remote: String
        @Option(parsing: .unconditional, help: CommandSupport.windowHelp) var window: Int?

        func validate() throws {
            try CommandSupport.checkWindow(window)
        }

        func run() async throws {
            let data = try readLocalFile(local)
            let clock = ContinuousClock()
            let began = clock.now
            var view = TransferProgressView(label: "upload", json: global.json)
            try await FSCommand.finishing(&view) { view in
                try await CommandContext.withClient(global) { client in
                    let upload = FileUpload(data: data, name: remote)
                    for try await event in client.upload(upload, options: TransferOptions(window: window)) {
                        view.update(event)
                    }
                    try Task.checkCancellation()
                }
            }
            let elapsed = clock.now - began
            if global.json {
                CommandSupport.emit(
                    .object([
                        ("event", .string("done")), ("name", .string(remote)), ("len", .int(Int64(data.count))),
                        ("seconds", TransferProgressView.jsonSeconds(elapsed)),
                    ])
                )
            } else {
                Console.out(
                    "uploaded \(local) to \(remote): \(TransferProgressView.completion(bytes: data.count, elapsed: elapsed))"
                )
            }
        }
    }

    struct Download: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Download a file from the device.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The path on the device.") var remote: String
        @Argument(help: "The local file to write.") var local: String
        @Option(parsing: .unconditional, help: CommandSupport.windowHelp) var window: Int?

        func validate() throws {
            try CommandSupport.checkWindow(window)
        }

        func run() async throws {
            try checkDestination()
            let clock = ContinuousClock()
            let began = clock.now
            var view = TransferProgressView(label: "download", json: global.json)
            let data = try await FSCommand.finishing(&view) { view in
                try await CommandContext.withClient(global) { client -> Data in
                    for try await event in client.download(name: remote, options: TransferOptions(window: window)) {
                        switch event {
                        case .progress(let progress): view.update(progress)
                        case .finished(let data): return data
                        }
                    }
                    try Task.checkCancellation()
                    throw SMPTransportError(.disconnected, "the download of \(remote) stopped before it finished")
                }
            }
            let elapsed = clock.now - began
            do {
                try data.write(to: URL(fileURLWithPath: local))
            } catch {
                throw CommandFailure("cannot write \(local): \(FileErrorReason.describe(error))")
            }
            report(data, elapsed: elapsed)
        }

        /// Refuses, before the transfer rather than after a long one, a destination that cannot be
        /// written: a folder, or a file whose folder is missing or not writable.
        private func checkDestination() throws {
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: local, isDirectory: &isFolder), isFolder.boolValue {
                throw CommandFailure("cannot write \(local): it is a folder, not a file")
            }
            let folder = (URL(fileURLWithPath: local).deletingLastPathComponent()).path
            guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
                throw CommandFailure("cannot write \(local): \(String(cString: strerror(ENOENT)))")
            }
            guard FileManager.default.isWritableFile(atPath: folder) else {
                throw CommandFailure("cannot write \(local): \(String(cString: strerror(EACCES)))")
            }
        }

        /// The `done` event (with the file's SHA-256), or one line for people.
        private func report(_ data: Data, elapsed: Duration) {
            if global.json {
                CommandSupport.emit(
                    .object([
                        ("event", .string("done")), ("name", .string(remote)), ("len", .int(Int64(data.count))),
                        ("sha256", .string(Hex.encode(ImageHashAlgorithm.sha256.hash(data)))),
                        ("seconds", TransferProgressView.jsonSeconds(elapsed)),
                    ])
                )
            } else {
                Console.out(
                    "downloaded \(remote) to \(local): \(TransferProgressView.completion(bytes: data.count, elapsed: elapsed))"
                )
            }
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a file's size.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The path on the device.") var remote: String

        func run() async throws {
            let request = FileManagement.Status(name: remote)
            let response = try await CommandContext.withClient(global) { try await $0.send(request) }
            if global.json {
                try CommandSupport.emit(request: request, response: response)
            } else {
                Console.out("\(remote): \(response.length) bytes")
            }
        }
    }

    struct Hash: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Have the device hash or checksum a file (or part of it)."
        )
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The path on the device.") var remote: String
        @Option(help: "crc32 or sha256 (default: the device's, usually crc32); see 'mcumgr fs types'.")
        var type: String?
        @Option(help: "Start at this offset.") var offset: UInt64?
        @Option(help: "Hash this many bytes (default: to the end).") var length: UInt64?

        func run() async throws {
            let request = FileManagement.Hash(
                name: remote,
                type: type.map { FileManagement.HashType(rawValue: $0.lowercased()) },
                offset: offset,
                length: length
            )
            let response = try await CommandContext.withClient(global) { try await $0.send(request) }
            if global.json {
                try CommandSupport.emit(request: request, response: response)
            } else {
                let outputText: String
                switch response.output {
                case .checksum(let value): outputText = String(format: "0x%08llx", value)
                case .digest(let bytes): outputText = Hex.encode(bytes)
                }
                let range = (response.offset ?? 0) == 0 ? "" : " from offset \(response.offset ?? 0)"
                Console.out("\(response.type) \(outputText)  \(remote) (\(response.length) bytes\(range))")
            }
        }
    }

    struct Types: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the hash and checksum types the device offers.")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let response = try await CommandContext.withClient(global) {
                try await $0.send(FileManagement.SupportedHashTypes())
            }
            if global.json {
                try CommandSupport.emit(response: response)
                return
            }
            guard !response.types.isEmpty else {
                Console.out("no hash types reported")
                return
            }
            let rows = response.types.map { entry -> [String] in
                let format =
                    switch entry.value.format {
                    case FileManagement.SupportedHashTypes.TypeInfo.numericFormat: "number"
                    case FileManagement.SupportedHashTypes.TypeInfo.byteArrayFormat: "bytes"
                    default: "format \(entry.value.format)"
                    }
                return [entry.name, format, "\(entry.value.size)"]
            }
            for line in CommandSupport.table(["type", "format", "size"], rows, rightAligned: [2]) { Console.out(line) }
        }
    }

    struct Close: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Close the file the device keeps open between transfer requests."
        )
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            _ = try await CommandContext.withClient(global) { try await $0.send(FileManagement.Close()) }
            if global.json { CommandSupport.emit(.object([])) } else { Console.out("closed") }
        }
    }
}
