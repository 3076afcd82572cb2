#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Terminal settings shared by ``SerialPort`` and ``PseudoTerminal``.
public enum TerminalSettings {
    /// The baud rates every platform can set, in bits per second.
    public static let standardBaudRates: [Int] = [
        1200, 2400, 4800, 9600, 19_200, 38_400, 57_600, 115_200, 230_400, 460_800, 500_000, 576_000, 921_600,
        1_000_000, 1_500_000, 2_000_000, 3_000_000, 4_000_000,
    ]

    /// The `speed_t` for a baud rate, or `nil` if the platform has no constant for it.
    /// - Parameter baudRate: bits per second.
    public static func speed(for baudRate: Int) -> speed_t? {
        #if canImport(Darwin)
            // Darwin's speed_t is the rate itself.
            return baudRate > 0 ? speed_t(baudRate) : nil
        #else
            let table: [Int: Int32] = [
                1200: B1200, 2400: B2400, 4800: B4800, 9600: B9600, 19_200: B19200, 38_400: B38400,
                57_600: B57600, 115_200: B115200, 230_400: B230400, 460_800: B460800, 500_000: B500000,
                576_000: B576000, 921_600: B921600, 1_000_000: B1000000, 1_500_000: B1500000,
                2_000_000: B2000000, 3_000_000: B3000000, 4_000_000: B4000000,
            ]
            return table[baudRate].map { speed_t($0) }
        #endif
    }

    /// Puts a terminal in raw mode (no echo, no line editing, no signals, no CR/LF translation,
    /// 8 data bits, no parity, one stop bit, no flow control) at a baud rate.
    /// - Parameters:
    ///   - fd: the terminal.
    ///   - baudRate: bits per second, or `nil` to keep the current rate.
    ///   - subject: names the terminal in errors.
    ///   - hardwareFlowControl: RTS/CTS on (an HCI UART at 1 Mbit/s loses bytes without it).
    /// - Throws: ``SystemCallError`` from `tcgetattr`/`tcsetattr`, or `EINVAL` for an unsupported rate.
    static func makeRaw(
        _ fd: Int32,
        baudRate: Int?,
        subject: String,
        hardwareFlowControl: Bool = false
    ) throws(SystemCallError) {
        var settings = termios()
        guard tcgetattr(fd, &settings) == 0 else { throw .errno("tcgetattr", subject) }
        cfmakeraw(&settings)
        settings.c_cflag |= tcflag_t(CLOCAL | CREAD)
        settings.c_cflag &= ~tcflag_t(CSTOPB | PARENB)
        #if !canImport(Darwin)
            let rtsCTS = tcflag_t(CRTSCTS)
        #else
            let rtsCTS = tcflag_t(CRTS_IFLOW | CCTS_OFLOW)
        #endif
        if hardwareFlowControl { settings.c_cflag |= rtsCTS } else { settings.c_cflag &= ~rtsCTS }
        settings.c_iflag &= ~tcflag_t(IXON | IXOFF | IXANY)
        // Non-blocking reads through poll: VMIN 0 / VTIME 0.
        withUnsafeMutableBytes(of: &settings.c_cc) { cc in
            cc[Int(VMIN)] = 0
            cc[Int(VTIME)] = 0
        }
        if let baudRate {
            guard let speed = speed(for: baudRate) else {
                throw SystemCallError("cfsetspeed", subject, code: EINVAL, reason: "unsupported baud rate \(baudRate)")
            }
            guard cfsetispeed(&settings, speed) == 0, cfsetospeed(&settings, speed) == 0 else {
                throw .errno("cfsetspeed", subject)
            }
        }
        guard tcsetattr(fd, TCSANOW, &settings) == 0 else { throw .errno("tcsetattr", subject) }
    }
}
