import Foundation
import Logging
import SMPBytes
import SMPPOSIX

/// Serves a ``SimulatedDevice`` over UDP, one SMP frame per datagram, as Zephyr's UDP transport
/// does (default port 1337, IPv4 or IPv6).
///
/// A receive thread (shared by every device of a ``SimulatedFleet``, sleeping while no datagram
/// comes) queues datagrams; one task hands them to the device in arrival order — each takes a
/// buffer of the device's pool or is dropped — and the device's work queue sends responses back
/// to each datagram's sender. ``stop()`` ends both.
///
/// ```swift
/// let server = try SimulatedUDPServer(device: device, host: "127.0.0.1", port: 0)
/// server.start()
/// print(server.endpointURL)        // udp://127.0.0.1:54321
/// await server.stop()
/// ```
public final class SimulatedUDPServer: Sendable {
    /// The device served.
    public let device: SimulatedDevice
    private let socket: UDPSocket
    private let stream: AsyncStream<(bytes: [UInt8], sender: SocketAddress)>
    private let continuation: AsyncStream<(bytes: [UInt8], sender: SocketAddress)>.Continuation
    private let worker = TaskBox()
    /// The thread that receives; the server's own unless a fleet shares one.
    private let receiver: UDPReceiveLoop
    private let ownsReceiver: Bool
    private let logger = Logger(label: "mcumgr.simulator.udp")
    private let clientLog = ClientLog()

    /// Binds the server's socket.
    /// - Parameters:
    ///   - device: the device to serve.
    ///   - host: the address to bind (`127.0.0.1`, `::1`, `0.0.0.0`…).
    ///   - port: the port; 0 lets the system choose (see ``localAddress``).
    /// - Throws: `SystemCallError` if the address cannot be bound (`EADDRINUSE`: another server
    ///   holds the port).
    public convenience init(device: SimulatedDevice, host: String = "127.0.0.1", port: UInt16 = 1337)
        throws(SystemCallError)
    {
        try self.init(device: device, host: host, port: port, receiver: nil)
    }

    /// Binds the server's socket, to be received on `receiver` (a fleet's shared thread), or on a
    /// thread of its own when `nil`.
    package init(device: SimulatedDevice, host: String, port: UInt16, receiver: UDPReceiveLoop?)
        throws(SystemCallError)
    {
        self.device = device
        socket = try UDPSocket(bindingTo: host, port: port)
        (stream, continuation) = AsyncStream.makeStream(of: (bytes: [UInt8], sender: SocketAddress).self)
        if let receiver {
            self.receiver = receiver
            ownsReceiver = false
        } else {
            self.receiver = try UDPReceiveLoop(name: "smp-simulator-udp")
            ownsReceiver = true
        }
    }

    deinit {
        // A server dropped without stop() must not leave its thread behind.
        if ownsReceiver { receiver.stop() }
    }

    /// The bound address, with the real port.
    public var localAddress: SocketAddress { socket.localAddress }

    /// The endpoint as a connection URL, e.g. `udp://127.0.0.1:1337` or `udp://[::1]:1337`.
    public var endpointURL: String { "udp://\(localAddress)" }

    /// Starts serving. Calling it again has no effect.
    public func start() {
        guard worker.claim() else { return }
        let socket = self.socket
        let continuation = self.continuation
        // Zephyr receives into a buffer of `CONFIG_MCUMGR_TRANSPORT_UDP_MTU` bytes: a longer
        // datagram is cut to it, and SMP answers ECORRUPT because the header announces more.
        let receiveBuffer = device.configuration.maximumDatagramSize
        let logger = self.logger
        let clientLog = self.clientLog
        receiver.add(socket, maximumLength: receiveBuffer) { bytes, sender in
            clientLog.record("\(sender)")
            continuation.yield((bytes, sender))
        }
        let device = self.device
        let stream = self.stream
        worker.set(
            Task {
                // The receive side only takes a buffer and queues the datagram; the device's work
                // queue answers later, so a burst of requests waits in the pool as on Zephyr.
                for await (bytes, sender) in stream {
                    let admitted = await device.receive(bytes) { delivery in
                        for scheduled in delivery.responses {
                            if scheduled.delay <= .zero {
                                try? socket.send(scheduled.frame, to: sender)
                            } else {
                                Task {
                                    try? await Task.sleep(for: scheduled.delay)
                                    try? socket.send(scheduled.frame, to: sender)
                                }
                            }
                        }
                    }
                    if !admitted { logger.debug("dropped a datagram: no free buffer, or the device is rebooting") }
                }
            }
        )
    }

    /// Every client socket that sent datagrams, with when it sent its first and its last: what a
    /// test reads to prove two clients never worked on the device at once (each connection of
    /// a client is a socket of its own).
    public var clients: [ClientSpan] { clientLog.spans }

    /// One client socket's datagrams.
    public struct ClientSpan: Sendable, Hashable {
        /// The client's address and port.
        public var address: String
        /// When its first datagram arrived.
        public var first: ContinuousClock.Instant
        /// When its last datagram arrived.
        public var last: ContinuousClock.Instant
        /// How many datagrams it sent.
        public var datagrams: Int
    }

    /// Stops serving and closes the socket; returns when the worker ended.
    public func stop() async {
        receiver.remove(socket)
        if ownsReceiver { receiver.stop() }
        socket.close()
        _ = worker.claim()
        continuation.finish()
        await worker.task?.value
    }
}

/// A task slot that can be claimed once.
final class TaskBox: Sendable {
    private let state = Locked<(claimed: Bool, stored: Task<Void, Never>?)>((false, nil))

    func claim() -> Bool {
        state.withLock { state in
            defer { state.claimed = true }
            return !state.claimed
        }
    }

    func set(_ task: Task<Void, Never>) {
        state.withLock { $0.stored = task }
    }

    var task: Task<Void, Never>? {
        state.withLock { $0.stored }
    }
}

/// The clients a server heard from.
final class ClientLog: Sendable {
    private let byAddress = Locked<[String: SimulatedUDPServer.ClientSpan]>([:])

    func record(_ address: String) {
        let now = ContinuousClock.now
        byAddress.withLock { byAddress in
            if var span = byAddress[address] {
                span.last = now
                span.datagrams += 1
                byAddress[address] = span
            } else {
                byAddress[address] = .init(address: address, first: now, last: now, datagrams: 1)
            }
        }
    }

    var spans: [SimulatedUDPServer.ClientSpan] {
        byAddress.withLock { $0.values.sorted { $0.first < $1.first } }
    }
}
