import Foundation
import HTTPTypes
import MCUboot
import MCUmgr
import MCUmgrConnect
import MCUmgrDFU
import SMPLink

/// One device the page manages: its transport (made once, so a `sim://` device stays the same
/// device between requests), a client while the link is up, and its operation.
///
/// One operation per device at a time: while an upgrade or a file transfer runs, every other
/// change is refused with what runs, and every tab sees that operation rather than a conflict.
actor DeviceSession {
    /// The link as the page shows it.
    enum Link: String, Codable, Sendable {
        /// Not connected yet.
        case idle
        /// The last request was answered.
        case connected
        /// The last request failed on the link; ``DeviceSession/reconnect()`` tries again.
        case disconnected
    }

    /// The page's id for the device.
    let id: String
    /// The connection URL, as typed (normalized).
    let url: String
    private let transport: any SMPTransport
    private let environment: WebEnvironment
    private var client: SMPClient?
    private(set) var link: Link = .idle
    /// The running operation (an upgrade, a file transfer), or the last one.
    private(set) var operation: (any DeviceOperation)?
    /// Device paths used on the Files screen, most recent first: the file system group has no
    /// listing, so the page offers the paths that worked before — in this run and, as the
    /// environment keeps them, in earlier ones.
    private(set) var rememberedPaths: [String]
    private let rememberedLimit = 20

    /// Creates a session; nothing is opened until the first request.
    /// - Parameters:
    ///   - id: the page's id for it.
    ///   - url: the connection URL.
    ///   - transport: how to reach it.
    ///   - environment: client settings and words.
    init(id: String, url: String, transport: any SMPTransport, environment: WebEnvironment) {
        self.id = id
        self.url = url
        self.transport = transport
        self.environment = environment
        rememberedPaths = Array(environment.loadPaths(url).prefix(rememberedLimit))
    }

    /// Runs `body` with a connected client, connecting first if needed. A link failure marks
    /// the link down and drops the client, so the next request (or a reconnect) opens a new one.
    /// - Throws: what `body` or the connection throws.
    func withClient<T: Sendable>(_ body: (SMPClient) async throws -> T) async throws -> T {
        let client = try await connected()
        do {
            let result = try await body(client)
            link = .connected
            return result
        } catch let error as SMPTransportError {
            await dropClient()
            throw error
        }
    }

    /// Closes the client and connects again.
    /// - Throws: `WebError` 409 while a file transfer runs (it uses this client: closing it would
    ///   end the transfer); else the connection's error.
    func reconnect() async throws {
        if operation is FileTransferOperation { try await checkIdle() }
        await dropClient()
        _ = try await connected()
    }

    /// Refuses a change while an operation runs.
    /// - Throws: `WebError` 409 naming the running operation.
    func checkIdle() async throws {
        if let operation, await operation.isRunning {
            let activity = await operation.current.activity
            throw WebError(.conflict, "\(activity) is running on this device; wait for it to end or cancel it")
        }
    }

    /// Starts a file transfer over this session's client, unless an operation runs.
    /// - Parameters:
    ///   - kind: upload or download.
    ///   - path: the path on the device.
    ///   - total: the bytes to move, when known before the transfer (an upload's size).
    ///   - local: the local file's name, when the page gave it.
    ///   - work: the transfer, given the client, a pause control and where to report progress;
    ///     returns a download's contents.
    /// - Returns: the operation, already running.
    /// - Throws: `WebError` 409 when an operation runs.
    func startTransfer(
        _ kind: FileTransferOperation.Kind,
        path: String,
        total: Int?,
        local: String? = nil,
        work: @escaping FileTransferOperation.Work
    ) async throws -> FileTransferOperation {
        try await checkIdle()
        let operation = FileTransferOperation(
            kind: kind,
            path: path,
            total: total,
            local: local,
            environment: environment
        ) {
            control,
            report in
            // Through `withClient`, so a link failure marks the link down as any request does.
            try await self.withClient { client in try await work(client, control, report) }
        }
        self.operation = operation
        remember(path)
        await operation.start()
        return operation
    }

    /// Keeps a device path for the Files screen, most recent first.
    /// - Parameter path: a path the page used.
    func remember(_ path: String) {
        rememberedPaths.removeAll { $0 == path }
        rememberedPaths.insert(path, at: 0)
        if rememberedPaths.count > rememberedLimit { rememberedPaths.removeLast() }
        environment.savePaths(url, rememberedPaths)
    }

    /// Starts an upgrade unless one runs.
    /// - Parameters:
    ///   - package: the firmware.
    ///   - file: its name.
    ///   - configuration: the engine's configuration (the mode).
    /// - Returns: the operation, already running.
    /// - Throws: `WebError` 409 when an upgrade runs.
    func startUpgrade(
        _ package: FirmwarePackage,
        file: String,
        configuration: FirmwareUpgrade.Configuration
    ) async throws -> UpgradeOperation {
        try await checkIdle()
        // The upgrade opens its own connections and resets the device: ours would be stale. The
        // link is not down: the next request connects again.
        await dropClient(linkState: .idle)
        let upgrade = FirmwareUpgrade(
            transport: transport,
            configuration: configuration,
            clientConfiguration: environment.clientConfiguration
        )
        let operation = UpgradeOperation(
            run: upgrade.run(package),
            file: file,
            mode: configuration.mode,
            connection: url,
            environment: environment
        )
        self.operation = operation
        await operation.start()
        return operation
    }

    private func connected() async throws -> SMPClient {
        if let client { return client }
        do {
            let client = try await SMPClient.connect(transport, configuration: environment.clientConfiguration)
            self.client = client
            link = .connected
            return client
        } catch {
            link = .disconnected
            throw error
        }
    }

    private func dropClient(linkState: Link = .disconnected) async {
        if let client { await client.close() }
        client = nil
        link = linkState
    }
}
