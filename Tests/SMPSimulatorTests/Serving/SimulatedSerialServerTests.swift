import Foundation
import MCUboot
import MCUmgrDFU
import SMPCBOR
import SMPCore
import SMPPOSIX
import SMPTestSupport
import Testing

@testable import SMPSimulator

/// The simulator on a pseudo-terminal, console and raw framing, checked by our own serial port
/// and by `smpmgr --port`.
@Suite("SimulatedSerialServer")
struct SimulatedSerialServerTests {
    /// Reads from a port until a frame arrives or the deadline passes. Polls without blocking a
    /// cooperative thread for long, so the server's tasks keep running on a 2-core machine.
    static func readFrame(_ port: SerialPort, framing: SimulatedSerialServer.Framing, timeout: Duration) async throws
        -> [UInt8]?
    {
        var console = SerialFrameDecoder()
        var raw = SMPStreamDecoder()
        return try await RealIO.poll(timeout: timeout) { () throws -> [UInt8]? in
            let bytes = try port.read(timeout: .milliseconds(1))
            let events = framing == .console ? console.feed(bytes) : raw.feed(bytes)
            for case .frame(let frame) in events { return frame }
            return nil
        }
    }

    @Test("answers over console and raw framing", arguments: SimulatedSerialServer.Framing.allCases)
    func echoOverPTY(framing: SimulatedSerialServer.Framing) async throws {
        let device = SimulatedDevice(configuration: .serial)
        let server = try SimulatedSerialServer(device: device, framing: framing, baudRate: 1_000_000)
        server.start()
        #expect(server.endpointURL.hasPrefix("serial:///dev/"))
        let port = try SerialPort(path: server.slavePath, baudRate: 115_200)
        let request = try SMPFrame.request(OSManagement.Echo(text: "over the wire"), sequence: 9).bytes
        try port.write(framing == .console ? SerialFraming.encode(request) : request)
        let reply = try #require(try await Self.readFrame(port, framing: framing, timeout: .seconds(30)))
        #expect(try SMPFrame(parsing: reply).decodeResponse(to: OSManagement.Echo.self).text == "over the wire")
        port.close()
        await server.stop()
    }

    /// Every burst shape of the reference file over the pty (console framing): a packet takes a
    /// buffer from its first line, so a fifth one finds none and is lost.
    @Test("bursts of 3, 4 and 5 chunks are answered as the observed server answered them", arguments: [3, 4, 5])
    func burstShapes(count: Int) async throws {
        let device = SimulatedDevice(configuration: BurstShape.configuration)
        let server = try SimulatedSerialServer(device: device, framing: .console, baudRate: nil)
        server.start()
        let port = try SerialPort(path: server.slavePath, baudRate: nil)
        try port.write(SerialFraming.encode(BurstShape.opening()))
        let opened = try #require(try await Self.readFrame(port, framing: .console, timeout: .seconds(30)))
        #expect(try SMPFrame(parsing: opened).payloadValue() == ["off": 512])
        var burst: [UInt8] = []
        for index in 0..<count { burst += try SerialFraming.encode(BurstShape.chunk(index)) }
        try port.write(burst)
        var answers: [UInt8: CBOR] = [:]
        var decoder = SerialFrameDecoder()
        func readAnswers() throws {
            for case .frame(let frame) in decoder.feed(try port.read(timeout: .milliseconds(1))) {
                let parsed = try SMPFrame(parsing: frame)
                answers[parsed.header.sequence] = try parsed.payloadValue()
            }
        }
        // Every expected answer (4 at most: a fifth request finds no buffer)...
        let expected = min(count, 4)
        _ = try await RealIO.poll(timeout: .seconds(30)) { () throws -> Bool? in
            try readAnswers()
            return answers.count >= expected ? true : nil
        }
        // ...then a moment for any that should not come.
        _ = try await RealIO.poll(timeout: .milliseconds(400)) { () throws -> Bool? in
            try readAnswers()
            return answers.count > expected ? true : nil
        }
        BurstShape.check(answers, burst: count)
        #expect(await device.requestsDroppedForBuffers == max(0, count - 4))
        port.close()
        await server.stop()
    }

    @Test("a packet with a bad CRC is dropped silently and the next one is answered")
    func badCRCIsDropped() async throws {
        let device = SimulatedDevice(configuration: .serial)
        let server = try SimulatedSerialServer(device: device, framing: .console, baudRate: nil)
        server.start()
        let port = try SerialPort(path: server.slavePath, baudRate: nil)
        var lines = try SerialFraming.encode(SMPFrame.request(OSManagement.Echo(text: "bad"), sequence: 1).bytes)
        // Change one base64 character of the payload: the CRC no longer checks.
        lines[6] = lines[6] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        try port.write(lines)
        #expect(try await Self.readFrame(port, framing: .console, timeout: .milliseconds(500)) == nil)
        try port.write(SerialFraming.encode(SMPFrame.request(OSManagement.Echo(text: "good"), sequence: 2).bytes))
        let reply = try #require(try await Self.readFrame(port, framing: .console, timeout: .seconds(30)))
        #expect(try SMPFrame(parsing: reply).decodeResponse(to: OSManagement.Echo.self).text == "good")
        port.close()
        await server.stop()
    }

    @Test("pacing follows the baud rate: 10 bits per byte")
    func lineTimeFollowsBaud() throws {
        let device = SimulatedDevice()
        let server = try SimulatedSerialServer(device: device, framing: .console, baudRate: 9_600)
        #expect(server.lineTime(960) == .seconds(1))
        #expect(server.endpointURL.hasSuffix("?baud=9600"))
    }

    @Test(
        "smpmgr over the pty: echo, state, signed upload, test, reset, confirm, files, statistics",
        Peers.needed("smpmgr", "imgtool"),
        // A hang guard only (each peer process is killed after Peers.processTimeout): a loaded
        // machine took over 5 minutes for these peer sessions while other builds ran.
        .timeLimit(.minutes(30))
    )
    func smpmgrFirmwareUpgradeOverSerial() async throws {
        let images = try await ImgtoolImages()
        defer { images.remove() }
        let signed = try await images.make(version: "1.2.3", size: 3_000)
        let key = try ImagePublicKey(keyFile: Data(contentsOf: images.key))
        // Zephyr's newer answers: smpmgr refuses 3.4's `rc: 0` in statistics answers.
        let device = SimulatedDevice(configuration: .init(bufferSize: 384, release: .latest, signingKey: key))
        let server = try SimulatedSerialServer(device: device, framing: .console, baudRate: 921_600)
        server.start()
        let tool = try #require(Peers.path(of: "smpmgr"))
        try await SMPMgrFlow.run(device: device, signed: signed) { arguments, directory in
            try await BoundedProcess.run(
                tool,
                ["--port", server.slavePath, "--baudrate", "921600", "--timeout", "10"] + arguments,
                timeout: .seconds(120),
                directory: directory
            )
        }
        await server.stop()
    }

    @Test(
        "mcumgr-toolkit over the pty: echo, parameters and a firmware update with 1024-byte buffers",
        Peers.needed("mcumgr_toolkit", "imgtool"),
        // A hang guard only (each peer process is killed after Peers.processTimeout): a loaded
        // machine took over 5 minutes for these peer sessions while other builds ran.
        .timeLimit(.minutes(30))
    )
    func mcumgrToolkitOverSerial() async throws {
        let images = try await ImgtoolImages()
        defer { images.remove() }
        let signed = try await images.make(version: "1.4.0", size: 8_000)
        let device = SimulatedDevice(configuration: .init(bufferSize: 1024))
        let server = try SimulatedSerialServer(device: device, framing: .console, baudRate: 921_600)
        server.start()
        let script = """
            import sys, mcumgr_toolkit as m
            c = m.MCUmgrClient.serial(sys.argv[1], 921600, 10000)
            c.use_auto_frame_size()
            print("echo", c.os_echo("over serial"))
            print("params", c.os_mcumgr_parameters())
            c.firmware_update(open(sys.argv[2], 'rb').read())
            print("DONE")
            """
        let python = try #require(Peers.python)
        let result = try await BoundedProcess.run(
            python,
            ["-c", script, server.slavePath, signed.path],
            timeout: .seconds(180)
        )
        #expect(result.status == 0, "\(result.summary)")
        #expect(result.stdout.contains("echo over serial"))
        #expect(result.stdout.contains("DONE"))
        // firmware_update resets the device at the end; the new image runs once it has rebooted.
        await device.waitUntilAnswering()
        #expect(await device.imageStates.first { $0.isActive }?.version == "1.4.0")
        await server.stop()
    }
}
