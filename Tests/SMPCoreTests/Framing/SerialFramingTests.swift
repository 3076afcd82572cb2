import Foundation
import SMPCore
import SMPTestSupport
import Testing

struct SerialFramingTests {
    /// The v2 echo request of peers.md §7.
    static let echo = TestBytes.hex("0a00000900000000a161646568656c6c6f")
    /// The first-chunk upload request of peers.md §7.
    static let upload = TestBytes.hex(
        "0a00006000010101a5636c656e1840636f666600637368615820fdeab9acf3710362bd2658cdc9a29e8f9c757fcf9811603a8c"
            + "447cd1d915110864646174615820000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f6569"
            + "6d61676500"
    )

    @Test func crcMatchesTheReferenceValues() {
        #expect(CRC16XMODEM.checksum(Array("123456789".utf8)) == 0x31c3)
        #expect(CRC16XMODEM.checksum(Self.echo) == 0xa27f)
        #expect(CRC16XMODEM.checksum(Self.echo + [0xa2, 0x7f]) == 0)
    }

    @Test func reproducesTheEchoLineExactly() throws {
        let line = try SerialFraming.encode(Self.echo)
        #expect(TestBytes.hex(line) == "060941424d4b4141414a41414141414b46685a47566f5a57787362364a2f0a")
    }

    @Test func reproducesTheTwoUploadLinesExactly() throws {
        let lines = try SerialFraming.encode(Self.upload)
        let expected =
            "\u{06}\u{09}AGoKAABgAAEBAaVjbGVuGEBjb2ZmAGNzaGFYIP3quazzcQNivSZYzcmino+cdX/PmBFgOoxEfNHZFREIZGRhdGFYIAABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZ\n"
            + "\u{04}\u{14}GhscHR4fZWltYWdlAD/v\n"
        #expect(lines == Array(expected.utf8))
        #expect(lines.split(separator: 0x0a).allSatisfy { $0.count + 1 <= 127 })
    }

    @Test(arguments: [7, 8, 20, 64, 127, 128, 300])
    func everyLineRespectsTheLimitAndDecodesOnItsOwn(_ limit: Int) throws {
        let message = Self.upload + Self.upload
        let encoded = try SerialFraming.encode(message, maximumLineLength: limit)
        for line in encoded.split(separator: 0x0a) {
            #expect(line.count + 1 <= max(limit, 7))
            #expect(Data(base64Encoded: Data(line.dropFirst(2))) != nil)
        }
        var decoder = SerialFrameDecoder()
        #expect(decoder.feed(encoded) == [.frame(message)])
    }

    @Test func dripFeedManyFramesWithConsoleTextBetween() throws {
        let input =
            try SerialFraming.encode(Self.echo) + Array("uart:~$ log line\r\n".utf8)
            + SerialFraming.encode(Self.upload) + Array("[00:00:01] <inf> app: ok\n".utf8)
            + SerialFraming.encode(Self.echo)
        DripFeed.verify(
            { SerialFrameDecoder() },
            input: input,
            expected: [
                .frame(Self.echo), .console(Array("uart:~$ log line".utf8)), .frame(Self.upload),
                .console(Array("[00:00:01] <inf> app: ok".utf8)), .frame(Self.echo),
            ]
        )
    }

    @Test func textPrintedWithoutANewlineBeforeAMarkerIsSplitOff() throws {
        let input = Array("boot".utf8) + (try SerialFraming.encode(Self.echo))
        var decoder = SerialFrameDecoder()
        #expect(decoder.feed(input) == [.console(Array("boot".utf8)), .frame(Self.echo)])
    }

    @Test func badCRCIsDroppedAndTheNextFrameStillDecodes() throws {
        var packet = [UInt8(0), UInt8(Self.echo.count + 2)] + Self.echo + [0xa2, 0x7e]
        let bad = [0x06, 0x09] + Array(Data(packet).base64EncodedString().utf8) + [0x0a]
        packet.removeAll()
        DripFeed.verify(
            { SerialFrameDecoder() },
            input: bad + (try SerialFraming.encode(Self.echo)),
            expected: [.discarded(SMPError(.badCRC)), .frame(Self.echo)]
        )
    }

    @Test func malformedLinesAreSpecificErrors() throws {
        let cases: [([UInt8], SMPError.Code)] = [
            ([0x06, 0x09] + Array("AB*D".utf8) + [0x0a], .badBase64),
            ([0x06, 0x09] + Array("ABC".utf8) + [0x0a], .badBase64),
            ([0x04, 0x14] + Array("AAAA".utf8) + [0x0a], .continuationWithoutStart),
            // A length prefix of 3 cannot hold a header and a CRC.
            ([0x06, 0x09] + Array(Data([0, 3, 0, 0, 0]).base64EncodedString().utf8) + [0x0a], .badFrameLength),
        ]
        for (input, code) in cases {
            var decoder = SerialFrameDecoder()
            #expect(decoder.feed(input) == [.discarded(SMPError(code))])
        }
    }

    @Test func aStartLineAbandonsAPartialPacket() throws {
        let twoLines = try SerialFraming.encode(Self.upload)
        let firstLine = Array(twoLines.prefix { $0 != 0x0a }) + [0x0a]
        var decoder = SerialFrameDecoder()
        #expect(decoder.feed(firstLine).isEmpty)
        #expect(decoder.isReceivingPacket)
        #expect(decoder.feed(try SerialFraming.encode(Self.echo)) == [.frame(Self.echo)])
    }

    @Test func oversizedPacketsAreDroppedBeforeBuffering() throws {
        var decoder = SerialFrameDecoder(maximumPacketSize: 64)
        #expect(decoder.feed(try SerialFraming.encode(Self.upload)) == [.discarded(SMPError(.badFrameLength))])
    }

    /// The limit counts the newline, as the encoder's does: a run of 100 bytes without one is
    /// already over a limit of 100, and comes out at the 100th byte, however the bytes arrive.
    @Test func endlessLinesAreFlushedAsConsoleTextAtTheLimit() {
        let run = [UInt8](repeating: 0x41, count: 100)
        DripFeed.verify(
            { SerialFrameDecoder(maximumLineLength: 100) },
            input: [UInt8](repeating: 0x41, count: 250),
            expected: [.console(run), .console(run)]
        )
        var decoder = SerialFrameDecoder(maximumLineLength: 100)
        #expect(decoder.feed([UInt8](repeating: 0x41, count: 99)).isEmpty, "a run below the limit waits")
        #expect(decoder.feed([0x41]) == [.console(run)], "flushed by the byte that reaches the limit")
    }

    /// A line of exactly the limit with its newline is one line, and packets encoded with a line
    /// limit decode through a decoder with the same limit, fed byte by byte.
    @Test(arguments: [7, 20, 127])
    func linesAtTheLimitAreWhole(_ limit: Int) throws {
        let text = Array(repeating: UInt8(ascii: "x"), count: limit - 1)
        let input = text + [0x0a] + (try SerialFraming.encode(Self.upload, maximumLineLength: limit))
        DripFeed.verify(
            { SerialFrameDecoder(maximumLineLength: limit) },
            input: input,
            expected: [.console(text), .frame(Self.upload)]
        )
    }

    @Test func messageSizeForABufferLeavesRoomForLengthAndCRC() {
        #expect(SerialFraming.maximumMessageSize(bufferSize: 384) == 380)
    }
}
