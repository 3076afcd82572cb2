import Foundation
import SMPCore
import SMPLink
import SMPPOSIX
import SMPSerialTransport
import SMPTestSupport
import Testing

/// The serial transport over a real pseudo-terminal, the tests playing the device.
@Suite struct SerialTransportTests {
    /// With raw framing a partial message is dropped after a quiet period measured on the
    /// transport's clock. A manual clock that never moves keeps it across a real silence longer
    /// than the period: the timer reads the injected clock, not the wall clock. (That advancing the
    /// clock drops it is shown with explicit times in ``SerialReceiverTests``.)
    @Test("raw framing times its quiet period on the transport's clock, not the wall clock", .timeLimit(.minutes(10)))
    func quietPeriodRunsOnTheTransportsClock() async throws {
        let terminal = try PseudoTerminal()
        defer { terminal.close() }
        let clock = ManualClock()
        let transport = SerialTransport(path: terminal.slavePath, framing: .raw, clock: SMPClock(clock))
        let connection = try await transport.connect()
        let collector = FrameCollector(connection.frames)
        let message = try SMPFrame.request(OSManagement.Echo(text: "across the silence"), sequence: 3).bytes

        try terminal.write(Array(message.prefix(10)))
        // Real time: three read slices of silence on the wire, the manual clock standing still.
        _ = try await RealIO.poll(timeout: .milliseconds(350)) { () -> Bool? in nil }
        try terminal.write(Array(message.dropFirst(10)))

        #expect(await collector.next(timeout: .seconds(10)) == message)
        await connection.close()
    }
}
