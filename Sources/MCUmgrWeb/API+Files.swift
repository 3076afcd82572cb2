import Foundation
import HTTPTypes
import Hummingbird
import MCUmgr
import NIOCore
import SMPCore

/// Files: upload a file to a device path and download one, as operations followed over the
/// live events (one per device, as upgrades); the paths used before, kept per device (the group
/// has no listing); and, where the device has a shell, its `fs ls` output.
extension API {
    struct RememberedPaths: Codable, Sendable { var paths: [String] }
    struct DownloadRequest: Codable, Sendable { var path: String? }
    struct Listing: Codable, Sendable {
        var directory: String
        var output: String
        var returnCode: Int?
        /// The shell's failure line when `fs ls` returned non-zero.
        var failure: String?
    }

    /// The longest device path taken; Zephyr's default (`CONFIG_MCUMGR_GRP_FS_PATH_LEN`) is 64,
    /// and what is longer than any file system's limit is surely a mistake.
    static let maximumPathLength = 255

    /// A device path as the page gives it: absolute (it starts with the mount point), printable,
    /// without `.` or `..` (LittleFS has no parent links), and within ``maximumPathLength``.
    /// - Parameters:
    ///   - text: the path given, if any.
    ///   - folder: a folder is asked for (`fs ls`): a trailing `/` is allowed.
    /// - Returns: the path.
    /// - Throws: `WebError` 400 saying what is wrong.
    static func devicePath(_ text: String?, folder: Bool = false) throws(WebError) -> String {
        let example = folder ? "/lfs1" : "/lfs1/config.txt"
        guard let text, !text.isEmpty else {
            throw WebError(.badRequest, "Device path: give the path on the device, e.g. \(example)")
        }
        guard !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw WebError(.badRequest, "Device path: the path contains control characters")
        }
        guard text.utf8.count <= maximumPathLength else {
            throw WebError(.badRequest, "Device path: longer than \(maximumPathLength) bytes")
        }
        guard text.hasPrefix("/") else {
            throw WebError(
                .badRequest,
                "Device path: '\(text)' does not start with /; a device path starts with its mount point, e.g. \(example)"
            )
        }
        let components = text.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        guard !components.contains(where: { $0 == "." || $0 == ".." }) else {
            throw WebError(
                .badRequest,
                "Device path: '\(text)' contains . or ..; give the whole path from the mount point"
            )
        }
        if !folder && (text == "/" || text.hasSuffix("/")) {
            throw WebError(.badRequest, "Device path: '\(text)' names a folder; give a file's path, e.g. \(example)")
        }
        return text
    }

    func registerFiles(on router: Router<BasicRequestContext>) {
        router.get("/api/devices/:id/files") { _, context in
            try await answer {
                let session = try await registry.session(context.parameters.require("id"))
                return try Self.json(RememberedPaths(paths: await session.rememberedPaths))
            }
        }
        router.post("/api/devices/:id/files/upload") { request, context in
            try await answer {
                let session = try await registry.session(context.parameters.require("id"))
                let path = try Self.devicePath(request.uri.queryParameters["path"].map(String.init))
                let local = try Self.localName(request.uri.queryParameters["name"].map(String.init))
                // Refused before the body is read: the device runs one operation at a time.
                try await session.checkIdle()
                let data = try await uploadBody(request)
                let operation = try await session.startTransfer(.upload, path: path, total: data.count, local: local) {
                    client,
                    control,
                    report in
                    let upload = FileUpload(data: data, name: path)
                    for try await event in client.upload(upload, control: control) {
                        if case .progress(let progress) = event { await report(progress) }
                    }
                    return nil
                }
                return try Self.json(
                    OperationState(device: await Self.summary(session), operation: await operation.current)
                )
            }
        }
        router.post("/api/devices/:id/files/download") { request, context in
            try await answer {
                let session = try await registry.session(context.parameters.require("id"))
                let path = try Self.devicePath(try await Self.body(DownloadRequest.self, from: request).path)
                try await session.checkIdle()
                let size = try await session.withClient { try await $0.send(FileManagement.Status(name: path)) }
                    .length
                // The contents are kept in memory until saved: the same limit as an upload.
                guard size <= UInt64(uploadLimit) else {
                    throw WebError(
                        .contentTooLarge,
                        "\(path) is \(size) bytes, larger than the \(Self.size(uploadLimit)) limit"
                    )
                }
                let operation = try await session.startTransfer(.download, path: path, total: Int(size)) {
                    client,
                    _,
                    report in
                    for try await event in client.download(name: path) {
                        switch event {
                        case .progress(let progress): await report(progress)
                        case .finished(let data): return data
                        }
                    }
                    try Task.checkCancellation()
                    throw SMPTransportError(.disconnected, "the download of \(path) stopped before it finished")
                }
                return try Self.json(
                    OperationState(device: await Self.summary(session), operation: await operation.current)
                )
            }
        }
        router.get("/api/devices/:id/files/content") { _, context in
            try await answer {
                let session = try await registry.session(context.parameters.require("id"))
                guard let transfer = await session.operation as? FileTransferOperation,
                    let contents = await transfer.contents
                else {
                    throw WebError(.notFound, "no finished download on this device; download the file first")
                }
                let path = await transfer.current.file
                return Self.attachment(contents, name: path.split(separator: "/").last.map(String.init) ?? "download")
            }
        }
        router.get("/api/devices/:id/files/list") { request, context in
            try await answer {
                let session = try await registry.session(context.parameters.require("id"))
                let directory = try Self.devicePath(
                    request.uri.queryParameters["directory"].map(String.init),
                    folder: true
                )
                let response = try await session.withClient {
                    try await $0.send(ShellManagement.Execute(arguments: ["fs", "ls", directory]))
                }
                let line = "fs ls \(directory)"
                return try Self.json(
                    Listing(
                        directory: directory,
                        output: response.output,
                        returnCode: response.returnCode,
                        failure: response.failureLine(command: line)
                    )
                )
            }
        }
    }

    /// The local file's name the page gives with an upload (`?name=`), for the result line.
    /// - Throws: `WebError` 400 for what is no file name.
    static func localName(_ text: String?) throws(WebError) -> String? {
        guard let text else { return nil }
        guard !text.isEmpty, !text.contains("/"), text.count <= 255,
            !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else {
            throw WebError(.badRequest, "Local file: '\(text.prefix(40))' is not a file name")
        }
        return text
    }

    /// An upload's bytes (the raw body), up to the upload limit.
    private func uploadBody(_ request: Request) async throws -> Data {
        do {
            return Data(try await request.body.collect(upTo: uploadLimit).readableBytesView)
        } catch {
            throw WebError(.contentTooLarge, "the file is larger than the \(Self.size(uploadLimit)) limit")
        }
    }

    /// Bytes for the browser to save under `name`.
    static func attachment(_ data: Data, name: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/octet-stream"
        // Only safe characters in the quoted name; the rest become `_`.
        let safe = String(name.map { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) ? $0 : "_" })
        headers[.contentDisposition] = "attachment; filename=\"\(safe.isEmpty ? "download" : safe)\""
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}
