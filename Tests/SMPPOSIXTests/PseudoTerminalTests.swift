import Foundation
import SMPPOSIX
import SMPTestSupport
import Testing

@Suite("PseudoTerminal and SerialPort")
struct PseudoTerminalTests {
    static func read(_ body: () throws -> [UInt8], count: Int, timeout: Duration) async throws -> [UInt8] {
        var bytes: [UInt8] = []
        _ = try await RealIO.poll(timeout: timeout) { () throws -> Bool? in
            bytes += try body()
            return bytes.count >= count ? true : nil
        }
        return bytes
    }

    @Test("bytes written on either side arrive unchanged in raw mode (no echo, no CR/LF translation)")
    func rawRoundTrip() async throws {
        let terminal = try PseudoTerminal()
        defer { terminal.close() }
        #expect(terminal.slavePath.hasPrefix("/dev/"))
        let port = try SerialPort(path: terminal.slavePath, baudRate: 115_200)
        defer { port.close() }
        let all = (0...255).map { UInt8($0) }
        try port.write(all)
        #expect(
            try await Self.read({ try terminal.read(timeout: .milliseconds(1)) }, count: 256, timeout: .seconds(30))
                == all
        )
        try terminal.write([0x0d, 0x0a, 0x03, 0x04])
        #expect(
            try await Self.read({ try port.read(timeout: .milliseconds(1)) }, count: 4, timeout: .seconds(30)) == [
                0x0d, 0x0a, 0x03, 0x04,
            ]
        )
        // Nothing was echoed back to the master.
        #expect(try terminal.read(timeout: .milliseconds(20)).isEmpty)
    }

    /// The read blocks for an hour: only the close can end it within the test's time limit.
    @Test("reads time out empty and return after close", .timeLimit(.minutes(10)))
    func closeUnblocks() async throws {
        let terminal = try PseudoTerminal()
        #expect(try terminal.read(timeout: .milliseconds(10)).isEmpty)
        let waiter = OnThread { try terminal.read(timeout: .seconds(3600)).isEmpty }
        try await Task.sleep(for: .milliseconds(30))
        terminal.close()
        #expect(try await waiter.value)
        #expect(terminal.isClosed)
    }

    @Test("opening a missing device or an unsupported rate fails with a system error")
    func failures() throws {
        #expect(throws: SystemCallError.self) { try SerialPort(path: "/dev/does-not-exist", baudRate: 9600) }
        let terminal = try PseudoTerminal()
        defer { terminal.close() }
        #if os(Linux)
            #expect(throws: SystemCallError.self) { try SerialPort(path: terminal.slavePath, baudRate: 12_345) }
        #endif
    }

    @Test("standard baud rates have speed constants", arguments: TerminalSettings.standardBaudRates)
    func speeds(rate: Int) {
        #expect(TerminalSettings.speed(for: rate) != nil)
    }

    @Test("a write with a timeout fails instead of blocking when nobody reads")
    func writeTimeout() async throws {
        let terminal = try PseudoTerminal()
        defer { terminal.close() }
        let chunk = [UInt8](repeating: 0x55, count: 4096)
        var failed = false
        for _ in 0..<1000 {
            do {
                try terminal.write(chunk, timeout: .milliseconds(50))
            } catch {
                failed = true
                break
            }
        }
        #expect(failed)
    }
}
