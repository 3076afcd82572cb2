import Foundation
import Hummingbird
import Logging
import NIOCore

/// `mcumgr ui`: the device manager in a browser — a local HTTP server with the page, its JSON
/// API and live updates (server-sent events), over the libraries (never the command line).
///
/// Because the page can reflash devices, every request needs the access token, a `Host` naming
/// this server, and for a change an `Origin` of this page; a non-loopback address needs
/// ``Configuration/allowRemote``.
public struct WebServer: Sendable {
    /// What the server listens on and allows.
    public struct Configuration: Sendable {
        /// Where to listen.
        public var address: ListenAddress
        /// Listening beyond this machine was asked for explicitly.
        public var allowRemote: Bool
        /// The access token every request must carry.
        public var token: AccessToken
        /// The largest firmware file accepted, in bytes.
        public var uploadLimit: Int

        /// Creates a configuration.
        /// - Parameters:
        ///   - address: where to listen (default `127.0.0.1:8080`).
        ///   - allowRemote: allow a non-loopback address.
        ///   - token: the access token (default: a new random one).
        ///   - uploadLimit: the largest firmware file (default 64 MiB).
        public init(
            address: ListenAddress = ListenAddress(host: "127.0.0.1", port: 8080),
            allowRemote: Bool = false,
            token: AccessToken = AccessToken(),
            uploadLimit: Int = 64 << 20
        ) {
            self.address = address
            self.allowRemote = allowRemote
            self.token = token
            self.uploadLimit = uploadLimit
        }

        /// Refuses a non-loopback address without ``allowRemote``.
        /// - Throws: ``WebConfigurationError`` naming the flag.
        public func validate() throws(WebConfigurationError) {
            if !address.isLoopback && !allowRemote {
                throw WebConfigurationError(
                    "--listen \(address) is reachable from other machines, and this page can reflash devices; "
                        + "add --allow-remote if you mean it (the token is still required)"
                )
            }
            guard uploadLimit > 0 else { throw WebConfigurationError("the upload limit must be positive") }
        }

        /// The URL to open: the address with the token (on a wildcard address, this machine's
        /// loopback one; other machines use one of its addresses with the same port and token).
        /// With port 0 the URL is known only once the server listens (``WebServer/run(onRunning:)``).
        public var url: String { "http://\(address.local)/?token=\(token.value)" }

        /// A warning to print when listening beyond this machine, else `nil`.
        public var remoteWarning: String? {
            address.isLoopback
                ? nil
                : "warning: listening on \(address): anyone who can reach it and has the token can reflash your devices"
                    + (address.isWildcard
                        ? "; from another machine open this machine's address with "
                            // Port 0 is chosen when the server listens: the URL printed next has it.
                            + (address.port == 0 ? "the port of the URL below" : "port \(address.port)")
                            + " and the same token"
                        : "")
        }
    }

    /// The configuration.
    public let configuration: Configuration
    /// How to reach devices, profiles, and the command line's words.
    public let environment: WebEnvironment

    /// Creates a server.
    /// - Parameters:
    ///   - configuration: address, token, limits.
    ///   - environment: connections, profiles, words.
    /// - Throws: ``WebConfigurationError`` for a configuration ``Configuration/validate()`` refuses.
    public init(configuration: Configuration, environment: WebEnvironment) throws(WebConfigurationError) {
        try configuration.validate()
        self.configuration = configuration
        self.environment = environment
    }

    /// The application: the router with the security rules, the page and the API.
    /// - Parameter onRunning: called once the server listens, with the URL to open (on port 0,
    ///   with the port the system chose).
    /// - Returns: the Hummingbird application, to run or to test.
    public func makeApplication(
        onRunning: @escaping @Sendable (_ url: String) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        let bound = BoundAddress(configuration.address)
        let router = Router(context: BasicRequestContext.self)
        router.add(middleware: SecurityMiddleware(token: configuration.token, bound: bound))
        Assets.register(on: router)
        let api = API(
            registry: DeviceRegistry(environment: environment),
            firmware: FirmwareStore(),
            fleet: FleetSlot(),
            simulators: SimulatorBench(),
            environment: environment,
            uploadLimit: configuration.uploadLimit
        )
        api.register(on: router)
        var logger = Logger(label: "mcumgr.ui")
        logger.logLevel = .warning
        let configuration = configuration
        return Application(
            router: router,
            configuration: .init(
                address: .hostname(configuration.address.host, port: configuration.address.port),
                serverName: "mcumgr"
            ),
            onServerRunning: { channel in
                if let port = channel.localAddress?.port { bound.listening(on: port) }
                var listening = configuration
                listening.address = bound.address
                await onRunning(listening.url)
            },
            logger: logger
        )
    }

    /// Serves until the task is cancelled (or SIGINT/SIGTERM).
    /// - Parameter onRunning: called once the server listens, with the URL to open.
    /// - Throws: the server's error, e.g. the address in use.
    public func run(onRunning: @escaping @Sendable (_ url: String) async -> Void = { _ in }) async throws {
        do {
            try await makeApplication(onRunning: onRunning).runService()
        } catch let error as IOError {
            // NIO's text names the system call; people need the reason.
            throw WebConfigurationError(
                "cannot listen on \(configuration.address): \(String(cString: strerror(error.errnoCode)).lowercased())"
                    + (error.errnoCode == EADDRINUSE ? " (another mcumgr ui? choose a port with --listen)" : "")
            )
        }
    }
}
