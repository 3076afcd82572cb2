#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A serial port (a tty device such as `/dev/ttyACM0`, or a pseudo-terminal's slave side) in raw
/// mode at a chosen baud rate.
///
/// Reads wait with `poll` in short slices and return what is available; writes write every
/// byte. After ``close()`` a blocked read returns an empty array shortly after.
public final class SerialPort: Sendable {
    private let descriptor: FileDescriptor
    /// The device path.
    public let path: String
    /// The baud rate set, or `nil` if the port's rate was left as it was.
    public let baudRate: Int?

    /// Opens a tty and puts it in raw mode.
    /// - Parameters:
    ///   - path: the device path.
    ///   - baudRate: bits per second (see ``TerminalSettings/standardBaudRates``); `nil` keeps the
    ///     current rate (pseudo-terminals ignore it anyway).
    ///   - hardwareFlowControl: RTS/CTS handshaking (HCI UARTs use it; SMP consoles do not).
    /// - Throws: ``SystemCallError`` from `open` or the termios calls.
    public init(path: String, baudRate: Int? = 115_200, hardwareFlowControl: Bool = false) throws(SystemCallError) {
        let fd = open(path, O_RDWR | O_NOCTTY | O_NONBLOCK)
        guard fd >= 0 else { throw .errno("open", path) }
        do throws(SystemCallError) {
            try TerminalSettings.makeRaw(
                fd,
                baudRate: baudRate,
                subject: path,
                hardwareFlowControl: hardwareFlowControl
            )
        } catch {
            _ = systemClose(fd)
            throw error
        }
        descriptor = FileDescriptor(fd)
        self.path = path
        self.baudRate = baudRate
    }

    /// Whether ``close()`` was called.
    public var isClosed: Bool { descriptor.closed }

    /// Reads what has arrived, waiting up to `timeout` for the first byte.
    /// - Parameters:
    ///   - maximumCount: the most bytes returned.
    ///   - timeout: how long to wait; `nil` waits until data arrives or the port is closed.
    /// - Returns: the bytes; empty on timeout or after close.
    /// - Throws: ``SystemCallError`` (e.g. `EIO` when a USB device goes away).
    public func read(maximumCount: Int = 4096, timeout: Duration?) throws(SystemCallError) -> [UInt8] {
        try descriptor.read(maximumCount: maximumCount, timeout: timeout, subject: path)
    }

    /// Writes every byte.
    /// - Parameters:
    ///   - bytes: the bytes.
    ///   - timeout: how long to wait for the driver to accept them in total; `nil` waits as long
    ///     as it takes (flow control can stall a port forever).
    /// - Throws: ``SystemCallError`` (`EAGAIN` on timeout).
    public func write(_ bytes: [UInt8], timeout: Duration? = nil) throws(SystemCallError) {
        try descriptor.writeAll(bytes, subject: path, timeout: timeout)
    }

    /// Discards received bytes not yet read.
    public func discardInput() {
        _ = descriptor.withDescriptor { tcflush($0, TCIFLUSH) }
    }

    /// Closes the port. Safe to call more than once.
    public func close() {
        descriptor.close()
    }
}
