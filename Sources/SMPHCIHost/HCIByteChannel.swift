import SMPPOSIX

/// The bytes to and from a controller: a socket or a UART. Reads block (on the link's own
/// thread), so a closed channel must make a blocked read return soon.
protocol HCIByteChannel: Sendable {
    /// Reads what arrived: empty on timeout, `nil` when the channel ended.
    func read(timeout: Duration?) throws -> [UInt8]?
    /// Writes every byte.
    func write(_ bytes: [UInt8]) throws
    /// Closes the channel; a blocked read returns soon after.
    func close()
}

extension StreamSocket: HCIByteChannel {
    func read(timeout: Duration?) throws -> [UInt8]? {
        try read(maximumCount: 4096, timeout: timeout)
    }
}

/// A UART, which has no end of stream: a port that went away (a dongle unplugged) fails its read
/// with `EIO`; a port closed here reads as ended.
struct SerialByteChannel: HCIByteChannel {
    let port: SerialPort

    func read(timeout: Duration?) throws -> [UInt8]? {
        let bytes = try port.read(maximumCount: 4096, timeout: timeout)
        return bytes.isEmpty && port.isClosed ? nil : bytes
    }

    func write(_ bytes: [UInt8]) throws { try port.write(bytes) }

    func close() { port.close() }
}

extension HCIControllerAddress {
    /// Opens the channel to the controller.
    /// - Throws: `SystemCallError` from the socket or the tty.
    func open() throws -> any HCIByteChannel {
        switch self {
        case .tcp(let host, let port): try StreamSocket(connectingTo: host, port: port)
        case .unix(let path): try StreamSocket(connectingToUnixPath: path)
        case .serial(let path, let baudRate, let flow):
            SerialByteChannel(port: try SerialPort(path: path, baudRate: baudRate, hardwareFlowControl: flow))
        }
    }
}
