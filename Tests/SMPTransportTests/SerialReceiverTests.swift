import Foundation
import SMPCore
import Testing

@testable import SMPSerialTransport

/// The serial read thread's framing and raw framing's quiet period, with times given by hand.
@Suite struct SerialReceiverTests {
    static let quiet = Duration.milliseconds(100)
    static let message = (try? SMPFrame.request(OSManagement.Echo(text: "first"), sequence: 1).bytes) ?? []
    static let next = (try? SMPFrame.request(OSManagement.Echo(text: "next"), sequence: 2).bytes) ?? []

    static func raw() -> SerialReceiver<SMPStreamDecoder> {
        SerialReceiver(SMPStreamDecoder(), quietPeriod: quiet, now: .zero)
    }

    @Test("raw: a message interrupted by a silence of the quiet period is dropped, seen idle or when bytes come")
    func quietPeriodDropsAPartialMessage() {
        let half = Array(Self.message.prefix(6))
        var idle = Self.raw()
        #expect(idle.receive(half, at: .zero).isEmpty)
        idle.idle(at: Self.quiet)
        #expect(idle.receive(Self.next, at: Self.quiet) == [.frame(Self.next)])

        var arriving = Self.raw()
        #expect(arriving.receive(half, at: .milliseconds(5)).isEmpty)
        #expect(arriving.receive(Self.next, at: .milliseconds(5) + Self.quiet) == [.frame(Self.next)])
    }

    @Test("raw: a silence shorter than the quiet period keeps the message")
    func shorterSilenceKeepsTheMessage() {
        var receiver = Self.raw()
        #expect(receiver.receive(Array(Self.message.prefix(6)), at: .zero).isEmpty)
        receiver.idle(at: Self.quiet - .milliseconds(1))
        let rest = Array(Self.message.dropFirst(6))
        #expect(receiver.receive(rest, at: Self.quiet - .milliseconds(1)) == [.frame(Self.message)])
    }

    @Test("the quiet period counts from the last bytes, not from the message's start")
    func quietPeriodCountsFromTheLastBytes() {
        var receiver = Self.raw()
        var time = Duration.zero
        var events: [SMPFramingEvent] = []
        for byte in Self.message {
            events += receiver.receive([byte], at: time)
            time += Self.quiet - .milliseconds(1)
        }
        #expect(events == [.frame(Self.message)])
    }

    @Test("console framing never drops a line for silence: its lines say where they end")
    func consoleKeepsALineAcrossSilence() throws {
        let line = try SerialFraming.encode(Self.message, maximumLineLength: SerialFraming.defaultMaximumLineLength)
        var receiver = SerialReceiver(SerialFrameDecoder(), quietPeriod: nil, now: .zero)
        #expect(receiver.receive(Array(line.prefix(5)), at: .zero).isEmpty)
        receiver.idle(at: .seconds(60))
        #expect(receiver.receive(Array(line.dropFirst(5)), at: .seconds(60)) == [.frame(Self.message)])
    }
}
