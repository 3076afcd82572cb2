import Foundation
import Logging
import SMPLink
import SMPPOSIX

/// SMP over UDP (Zephyr's `CONFIG_MCUMGR_TRANSPORT_UDP`): one SMP message per datagram.
///
/// UDP delivers nothing twice and nothing in order by promise, and loses datagrams silently;
/// the client's per-request timeouts, retries and sequence matching make up for that.
public struct UDPTransport: SMPTransport {
    /// The SMP port Zephyr listens on by default.
    public static let defaultPort: UInt16 = 1337

    /// The device's host name or address (IPv4, or IPv6 with or without brackets).
    public let host: String
    /// The device's port.
    public let port: UInt16
    /// The largest datagram sent; `nil` = the link MTU of 1500 less IP and UDP headers
    /// (1472 bytes over IPv4, 1452 over IPv6), as smpclient does.
    public let maximumDatagramSize: Int?
    private let logger: Logger

    /// Creates a transport.
    /// - Parameters:
    ///   - host: the device's host or address.
    ///   - port: the device's port (1337 by default).
    ///   - maximumDatagramSize: the largest datagram to send.
    ///   - logger: logger for the transport (label `mcumgr.transport.udp` by default).
    public init(
        host: String,
        port: UInt16 = UDPTransport.defaultPort,
        maximumDatagramSize: Int? = nil,
        logger: Logger? = nil
    ) {
        self.host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        self.port = port
        self.maximumDatagramSize = maximumDatagramSize
        self.logger = logger ?? Logger(label: "mcumgr.transport.udp")
    }

    public var endpointDescription: String { host.contains(":") ? "udp://[\(host)]:\(port)" : "udp://\(host):\(port)" }

    public func connect() async throws -> any SMPConnection {
        let socket: UDPSocket
        do {
            socket = try UDPSocket(connectingTo: host, port: port)
        } catch {
            throw SMPTransportError(.connectionFailed, "cannot reach \(endpointDescription)", cause: error)
        }
        let isIPv6 = socket.remoteAddress?.isIPv6 ?? false
        let size = maximumDatagramSize ?? (isIPv6 ? 1452 : 1472)
        logger.debug(
            "opened",
            metadata: ["endpoint": "\(endpointDescription)", "local": "\(socket.localAddress)", "datagram": "\(size)"]
        )
        return UDPConnection(
            socket: socket,
            maximumFrameSize: size,
            endpoint: endpointDescription,
            logger: logger
        )
    }
}

/// An open UDP conversation.
final class UDPConnection: SMPConnection {
    let maximumFrameSize: Int
    let frames: AsyncThrowingStream<[UInt8], any Error>
    private let socket: UDPSocket
    private let continuation: AsyncThrowingStream<[UInt8], any Error>.Continuation
    private let logger: Logger
    private let endpoint: String

    init(socket: UDPSocket, maximumFrameSize: Int, endpoint: String, logger: Logger) {
        self.socket = socket
        self.maximumFrameSize = maximumFrameSize
        self.endpoint = endpoint
        self.logger = logger
        (frames, continuation) = AsyncThrowingStream.makeStream(of: [UInt8].self, throwing: (any Error).self)
        let continuation = self.continuation
        // One receive buffer for the connection's life: a datagram costs one allocation, its own.
        BlockingReadLoop.start(name: "mcumgr.udp.read", state: [UInt8](repeating: 0, count: 65_536)) { buffer in
            guard !socket.isClosed else {
                continuation.finish()
                return false
            }
            do {
                if let count = try socket.receive(into: &buffer, timeout: .milliseconds(250)) {
                    continuation.yield(Array(buffer[..<count]))
                }
            } catch {
                // ICMP "port unreachable" surfaces as ECONNREFUSED on a connected socket: nothing
                // listens there. Say so at once rather than let every request time out.
                if (error as? SystemCallError)?.code == ECONNREFUSED {
                    socket.close()
                    continuation.finish(throwing: UDPConnection.refused(endpoint))
                    return false
                }
                logger.debug("receive failed", metadata: ["error": "\(error)"])
                if socket.isClosed {
                    continuation.finish()
                    return false
                }
                Thread.sleep(forTimeInterval: 0.01)
            }
            return true
        }
    }

    func send(_ frame: [UInt8]) async throws {
        guard frame.count <= maximumFrameSize else {
            throw SMPTransportError.frameTooLarge(
                size: frame.count,
                limit: maximumFrameSize,
                "\(frame.count) bytes exceed the \(maximumFrameSize)-byte datagram limit"
            )
        }
        guard !socket.isClosed else { throw SMPTransportError.closed("the UDP socket is closed") }
        do {
            try socket.send(frame)
        } catch {
            if error.code == ECONNREFUSED { throw UDPConnection.refused(endpoint) }
            // Other failures (no route yet, a full buffer) are like a lost datagram: the request
            // times out and is retried.
            logger.debug("send failed; treating the datagram as lost", metadata: ["error": "\(error)"])
        }
    }

    /// The error for a port that answered ICMP "port unreachable".
    static func refused(_ endpoint: String) -> SMPTransportError {
        SMPTransportError(
            .connectionRefused,
            "nothing listens at \(endpoint) (the host answered ICMP port unreachable): check the port, and that the device runs its SMP server"
        )
    }

    func close() async {
        socket.close()
        continuation.finish()
    }
}
