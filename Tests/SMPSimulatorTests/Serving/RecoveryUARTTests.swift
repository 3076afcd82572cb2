import Testing

@testable import SMPSimulator

/// MCUboot's serial-recovery receive path: lines wait in a few buffers, a line that finds none is
/// lost whole, a long line is cut at its buffer's length.
@Suite struct RecoveryUARTTests {
    static func line(_ text: String) -> [UInt8] { Array(text.utf8) + [0x0a] }

    @Test("bytes split anywhere give the same lines", arguments: [1, 2, 3, 7, 64])
    func dripFeed(piece: Int) {
        let wire = Self.line("\u{6}\u{9}AAAA") + Self.line("\u{4}\u{14}BB") + Self.line("C")
        var uart = RecoveryUART(lineBuffers: 8, maximumLineLength: 128)
        var start = 0
        while start < wire.count {
            uart.receive(wire[start..<min(start + piece, wire.count)])
            start += piece
        }
        var lines: [[UInt8]] = []
        while let line = uart.takeLine() { lines.append(line) }
        #expect(lines == [Self.line("\u{6}\u{9}AAAA"), Self.line("\u{4}\u{14}BB"), Self.line("C")])
        #expect(uart.linesLost == 0)
    }

    @Test("with every buffer holding a line, the next line is lost whole; taking one frees a buffer")
    func fullBuffersLoseWholeLines() {
        var uart = RecoveryUART(lineBuffers: 2, maximumLineLength: 128)
        uart.receive(Self.line("one") + Self.line("two") + Self.line("three"))
        #expect(uart.linesLost == 1)
        #expect(uart.takeLine() == Self.line("one"))
        uart.receive(Self.line("four"))
        #expect(uart.takeLine() == Self.line("two"))
        #expect(uart.takeLine() == Self.line("four"))
        #expect(uart.takeLine() == nil)
        #expect(uart.linesLost == 1)
    }

    @Test("a line is kept up to its buffer's length, newline included; the rest is dropped")
    func longLinesAreCut() {
        var uart = RecoveryUART(lineBuffers: 1, maximumLineLength: 5)
        uart.receive(Self.line("abcdefgh"))
        #expect(uart.takeLine() == Self.line("abcd"))
        #expect(uart.linesLost == 0)
    }
}
