/// MCUboot's UART receive path in serial recovery (`boot/zephyr/serial_adapter.c`): an interrupt
/// fills line buffers from a small pool while the main loop handles one message at a time, and
/// takes the next line only when it is done.
///
/// A line needs a free buffer when it starts; with every buffer holding a line the main loop has
/// not taken yet, the whole line is lost. A line keeps at most its buffer's length (marker and
/// newline included); the rest up to the newline is lost. A lost line corrupts its packet, which
/// then fails its CRC and is never answered. Pure counting: the serial server feeds it bytes and
/// takes lines when the device is free.
struct RecoveryUART: Sendable {
    /// `BOOT_LINE_BUFS`: lines that can wait for the main loop.
    let lineBuffers: Int
    /// `BOOT_MAX_LINE_INPUT_LEN`: the longest line kept, newline included.
    let maximumLineLength: Int
    /// Complete lines waiting for the main loop, each ending with its newline.
    private var waiting: [[UInt8]] = []
    /// The line being received, or `nil` while a line that found no buffer is being skipped.
    private var current: [UInt8]? = []
    /// Lines lost for want of a buffer.
    private(set) var linesLost = 0

    init(lineBuffers: Int, maximumLineLength: Int) {
        self.lineBuffers = max(1, lineBuffers)
        self.maximumLineLength = max(2, maximumLineLength)
    }

    /// Bytes from the wire, split anywhere.
    mutating func receive(_ bytes: some Sequence<UInt8>) {
        for byte in bytes {
            if current?.isEmpty ?? false, waiting.count >= lineBuffers {
                // A new line and no buffer for it: it is lost up to its newline.
                current = nil
                linesLost += 1
            }
            if byte == 0x0a {
                if var line = current {
                    line.append(byte)
                    waiting.append(line)
                }
                current = []
            } else if let line = current, line.count < maximumLineLength - 1 {
                current?.append(byte)
            }
        }
    }

    /// The oldest complete line, which frees its buffer.
    mutating func takeLine() -> [UInt8]? {
        waiting.isEmpty ? nil : waiting.removeFirst()
    }
}
