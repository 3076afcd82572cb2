import Foundation
import MCUboot
import SMPPOSIX
import SMPSimulator
import Testing

@testable import MCUmgrCommands

/// The "bytes sent again" an upload reports, checked against what the device itself counted.
@Suite struct UploadCountersTests {
    /// Forced to a window of 8 over UDP, the device runs out of buffers and the client sends
    /// chunks again. Every byte sent either reached the device's upload handler (it counts them)
    /// or was one of the requests it dropped or refused for want of a buffer (it counts those, each
    /// at most one 1448-byte chunk), and each byte of the image was written once. So the figure the
    /// command prints lies between what reached the device twice and that plus the refused
    /// requests' chunks: it is neither invented nor hidden.
    @Test func theBytesSentAgainAreWhatTheDeviceSaw() async throws {
        let device = SimulatedDevice(
            configuration: .init(bufferSize: 2048, bufferCount: 4, requestProcessingTime: .milliseconds(10))
        )
        let server = try SimulatedUDPServer(device: device, host: "127.0.0.1", port: 0)
        server.start()
        let scratch = Scratch()
        let image = FactoryImage.make(version: ImageVersion(major: 2, minor: 0, revision: 0), payloadSize: 100_000)
        let file = try scratch.file("app.bin", Data(image))
        let conn = "udp://127.0.0.1:\(server.localAddress.port)"
        let result = await CLI.run(["--conn", conn, "image", "upload", file, "--window", "8"])
        #expect(result.status == 0, "\(result.stderr)")
        let line = try #require(CLI.lines(result.stdout).first { $0.hasPrefix("uploaded ") })
        let resent =
            line.split(separator: ",").first { $0.contains("bytes sent again") }.flatMap {
                Int($0.trimmingCharacters(in: .whitespaces).split(separator: " ")[0])
            } ?? 0
        let counters = await device.counters
        let turnedAway = await device.requestsDroppedForBuffers + device.requestsRefusedForBuffers
        #expect(counters.imageBytesWritten == image.count, "each byte written once: \(counters)")
        let seenTwice = counters.imageBytesReceived - counters.imageBytesWritten
        #expect(resent >= seenTwice, "reported \(resent) < \(seenTwice) the device received again")
        #expect(
            resent <= seenTwice + turnedAway * 1_448,
            "reported \(resent), device: \(counters), \(turnedAway) turned away"
        )
        #expect(counters.uploadsStarted == 1)
        await server.stop()
    }
}
