import SMPBytes

/// The address the server really listens on: the configured one, with the port the system chose
/// when the configuration asked for port 0. The security rules and the printed URL read it, so
/// both name the port a browser will use.
final class BoundAddress: Sendable {
    private let current: Locked<ListenAddress>

    /// Starts as the configured address.
    /// - Parameter configured: the `--listen` address.
    init(_ configured: ListenAddress) { current = Locked(configured) }

    /// The address now: before the server listens, the configured one.
    var address: ListenAddress { current.withLock { $0 } }

    /// Records the port the listening socket got.
    /// - Parameter port: the socket's local port.
    func listening(on port: Int) { current.withLock { $0.port = port } }
}
