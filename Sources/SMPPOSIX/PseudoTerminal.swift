#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A pseudo-terminal pair (`posix_openpt`, `grantpt`, `unlockpt`, `ptsname`): this object holds
/// the master side; a client opens ``slavePath`` like any serial port.
///
/// The slave is put in raw mode, and this object keeps its own descriptor of the slave open so
/// the master does not see a hang-up (and spin) while no client has the port open.
public final class PseudoTerminal: Sendable {
    private let master: FileDescriptor
    private let slave: FileDescriptor
    /// The slave device path, e.g. `/dev/pts/3`.
    public let slavePath: String

    /// Opens a new pseudo-terminal pair in raw mode.
    /// - Throws: ``SystemCallError`` from the pty calls or termios.
    public init() throws(SystemCallError) {
        let fd = PTY.openMaster()
        guard fd >= 0 else { throw .errno("posix_openpt", "/dev/ptmx") }
        guard let path = PTY.unlockAndName(fd) else {
            let error = SystemCallError.errno("grantpt/unlockpt/ptsname", "/dev/ptmx")
            _ = systemClose(fd)
            throw error
        }
        let slaveFD = open(path, O_RDWR | O_NOCTTY | O_NONBLOCK)
        guard slaveFD >= 0 else {
            let error = SystemCallError.errno("open", path)
            _ = systemClose(fd)
            throw error
        }
        do throws(SystemCallError) {
            try TerminalSettings.makeRaw(slaveFD, baudRate: nil, subject: path)
        } catch {
            _ = systemClose(slaveFD)
            _ = systemClose(fd)
            throw error
        }
        setNonBlocking(fd)
        master = FileDescriptor(fd)
        slave = FileDescriptor(slaveFD)
        slavePath = path
    }

    /// Whether ``close()`` was called.
    public var isClosed: Bool { master.closed }

    /// Reads what a client wrote to the slave, waiting up to `timeout` for the first byte.
    /// - Parameters:
    ///   - maximumCount: the most bytes returned.
    ///   - timeout: how long to wait; `nil` waits until data arrives or the terminal is closed.
    /// - Returns: the bytes; empty on timeout or after close.
    /// - Throws: ``SystemCallError`` on a read failure.
    public func read(maximumCount: Int = 4096, timeout: Duration?) throws(SystemCallError) -> [UInt8] {
        do {
            return try master.read(maximumCount: maximumCount, timeout: timeout, subject: slavePath)
        } catch  where error.code == EIO {
            // Linux reports EIO on the master while no slave descriptor is open; ours keeps one
            // open, so this is transient.
            return []
        }
    }

    /// Writes bytes for the client to read from the slave.
    /// - Parameters:
    ///   - bytes: the bytes.
    ///   - timeout: how long to wait for the client to make room; `nil` waits as long as it takes.
    /// - Throws: ``SystemCallError`` (`EAGAIN` when the timeout passes with the buffer still full).
    public func write(_ bytes: [UInt8], timeout: Duration? = .seconds(1)) throws(SystemCallError) {
        try master.writeAll(bytes, subject: slavePath, timeout: timeout)
    }

    /// Discards bytes written to the client that it has not read yet (e.g. before a new client
    /// opens the port).
    public func discardPendingOutput() {
        _ = slave.withDescriptor { tcflush($0, TCIFLUSH) }
    }

    /// Closes both sides. Safe to call more than once.
    public func close() {
        master.close()
        slave.close()
    }
}

/// The pty calls. Glibc declares `posix_openpt`, `grantpt`, `unlockpt` and `ptsname_r` only under
/// `_XOPEN_SOURCE`, which Swift's Glibc module does not define, so on Linux they are looked up
/// in the C library at run time; Darwin declares them normally.
private enum PTY {
    static func openMaster() -> Int32 {
        #if canImport(Darwin)
            return posix_openpt(O_RDWR | O_NOCTTY)
        #else
            typealias OpenPT = @convention(c) (Int32) -> Int32
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_openpt") else {
                return open("/dev/ptmx", O_RDWR | O_NOCTTY)
            }
            return unsafeBitCast(symbol, to: OpenPT.self)(O_RDWR | O_NOCTTY)
        #endif
    }

    static func unlockAndName(_ fd: Int32) -> String? {
        #if canImport(Darwin)
            guard grantpt(fd) == 0, unlockpt(fd) == 0, let name = ptsname(fd) else { return nil }
            return String(cString: name)
        #else
            typealias Call = @convention(c) (Int32) -> Int32
            typealias NameCall = @convention(c) (Int32, UnsafeMutablePointer<CChar>, Int) -> Int32
            let handle = UnsafeMutableRawPointer(bitPattern: 0)
            guard let grant = dlsym(handle, "grantpt"), let unlock = dlsym(handle, "unlockpt"),
                let name = dlsym(handle, "ptsname_r")
            else { return nil }
            guard unsafeBitCast(grant, to: Call.self)(fd) == 0, unsafeBitCast(unlock, to: Call.self)(fd) == 0 else {
                return nil
            }
            var buffer = [CChar](repeating: 0, count: 128)
            let result = buffer.withUnsafeMutableBufferPointer {
                unsafeBitCast(name, to: NameCall.self)(fd, $0.baseAddress!, $0.count)
            }
            return result == 0 ? cArrayString(buffer) : nil
        #endif
    }
}
