import Foundation
import Hummingbird
import MCUboot
import MCUmgrDFU
import NIOCore

/// Upgrades: a firmware file is sent and shown (what `mcumgr image info` shows) before anything
/// reaches a device; then an upgrade in a chosen mode, its snapshot, its live events, pause,
/// resume and cancel.
extension API {
    struct FirmwareInfo: Codable, Sendable {
        struct Image: Codable, Sendable {
            var image: Int
            var version: String?
            var size: Int
            var hash: String
        }

        var id: String
        var name: String
        var format: String
        var images: [Image]
        var lines: [String]
    }

    struct StartUpgrade: Codable, Sendable {
        var firmware: String
        var mode: String?
    }

    struct OperationState: Codable, Sendable {
        var device: DeviceSummary
        var operation: OperationSnapshot?
    }

    func registerUpgrade(on router: Router<BasicRequestContext>) {
        router.post("/api/firmware") { request, _ in
            try await answer { try await receiveFirmware(request) }
        }
        router.post("/api/devices/:id/upgrade") { request, context in
            try await answer {
                let session = try await registry.session(context.parameters.require("id"))
                let body = try await Self.body(StartUpgrade.self, from: request)
                let modeText = body.mode ?? FirmwareUpgrade.Mode.confirmOnly.rawValue
                guard let mode = FirmwareUpgrade.Mode(rawValue: modeText) else {
                    let modes = FirmwareUpgrade.Mode.allCases.map(\.rawValue).joined(separator: ", ")
                    throw WebError(.badRequest, "Mode: '\(modeText)' is not one of \(modes)")
                }
                let entry = try await firmware.entry(body.firmware)
                let operation = try await session.startUpgrade(
                    entry.package,
                    file: entry.name,
                    configuration: FirmwareUpgrade.Configuration(mode: mode)
                )
                return try Self.json(
                    OperationState(device: await Self.summary(session), operation: await operation.current)
                )
            }
        }
        router.get("/api/devices/:id/operation") { _, context in
            try await answer {
                let session = try await registry.session(context.parameters.require("id"))
                let operation = await session.operation
                return try Self.json(
                    OperationState(device: await Self.summary(session), operation: await operation?.current)
                )
            }
        }
        router.get("/api/devices/:id/operation/events") { _, context in
            try await answer {
                let session = try await registry.session(context.parameters.require("id"))
                guard let operation = await session.operation else {
                    throw WebError(.notFound, "nothing has run on this device yet")
                }
                return Self.eventStream(await operation.subscribe())
            }
        }
        let actions: [(String, @Sendable (any DeviceOperation) async throws -> Void)] = [
            ("pause", { @Sendable operation in try await operation.pause() }),
            ("resume", { @Sendable operation in await operation.resume() }),
            ("cancel", { @Sendable operation in await operation.cancel() }),
        ]
        for (action, perform) in actions {
            router.post(RouterPath("/api/devices/:id/operation/\(action)")) { _, context in
                try await answer {
                    let session = try await registry.session(context.parameters.require("id"))
                    guard let operation = await session.operation, await operation.isRunning else {
                        throw WebError(.conflict, "nothing is running on this device")
                    }
                    try await perform(operation)
                    return try Self.json(
                        OperationState(device: await Self.summary(session), operation: await operation.current)
                    )
                }
            }
        }
    }

    /// Reads a firmware file (the raw body; its name in `?name=`), parses it and keeps it.
    private func receiveFirmware(_ request: Request) async throws -> Response {
        let name = request.uri.queryParameters["name"].map(String.init) ?? "firmware.bin"
        guard !name.isEmpty, !name.contains("/"), name.count <= 255 else {
            throw WebError(.badRequest, "Firmware file: '\(name)' is not a file name")
        }
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: uploadLimit)
        } catch {
            throw WebError(.contentTooLarge, "the firmware file is larger than the \(Self.size(uploadLimit)) limit")
        }
        guard buffer.readableBytes > 0 else { throw WebError(.badRequest, "\(name): empty file") }
        let package: FirmwarePackage
        do {
            package = try FirmwarePackage(data: Data(buffer.readableBytesView), fileName: name)
        } catch {
            let detail = error.message.isEmpty ? "\(error.code)" : error.message
            throw WebError(.unprocessableContent, detail.hasPrefix(name) ? detail : "\(name): \(detail)")
        }
        let id = await firmware.add(.init(name: name, package: package))
        let info = FirmwareInfo(
            id: id,
            name: name,
            format: "\(package.format)",
            images: package.images.map {
                .init(
                    image: $0.imageIndex,
                    version: $0.version.map { "\($0)" },
                    size: $0.data.count,
                    hash: $0.hash.map { String(format: "%02x", $0) }.joined()
                )
            },
            lines: environment.packageLines(package, name)
        )
        return try Self.json(info)
    }

    /// Server-sent events: one `data:` line of JSON per snapshot; the stream ends with the
    /// operation (or the rollout: `event` names which the page listens for).
    /// - Parameters:
    ///   - snapshots: the operation's snapshots.
    ///   - event: the event's name.
    ///   - message: what to send for a snapshot, given the one this stream sent before it
    ///     (`nil` for the first): by default the snapshot itself.
    static func eventStream<Snapshot: Encodable & Sendable>(
        _ snapshots: AsyncStream<Snapshot>,
        event: String = "operation",
        message: @escaping @Sendable (Snapshot, _ previous: Snapshot?) -> any Encodable = { snapshot, _ in snapshot }
    ) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream"
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        return Response(
            status: .ok,
            headers: headers,
            body: ResponseBody { writer in
                var previous: Snapshot?
                for await snapshot in snapshots {
                    let body = message(snapshot, previous)
                    previous = snapshot
                    let json = (try? encoder.encode(body)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
                    try await writer.write(ByteBuffer(string: "event: \(event)\ndata: \(json)\n\n"))
                }
                try await writer.finish(nil)
            }
        )
    }
}
