import Foundation
import MCUboot
import MCUmgrDFU
import SMPCBOR
import SMPCore
import SMPPOSIX
import SMPTestSupport
import Testing

@testable import SMPSimulator

/// The simulator over real UDP sockets on the loopback interface, checked by our own socket and
/// by other people's clients (`smpmgr`, `smpclient`, `mcumgr-toolkit`).
///
/// `smpmgr` has no port option (its UDP port is fixed at 1337), so its tests bind port 1337 on a
/// random address of the 127.0.0.0/8 loopback network (Linux answers on all of it), which
/// cannot collide with anything else listening on 127.0.0.1:1337.
@Suite("SimulatedUDPServer", .serialized)
struct SimulatedUDPServerTests {
    /// Receives without blocking a cooperative thread for long.
    func receive(_ socket: UDPSocket, timeout: Duration) async throws -> (bytes: [UInt8], sender: SocketAddress)? {
        try await RealIO.poll(timeout: timeout) { try socket.receive(timeout: .milliseconds(1)) }
    }

    static func echoFrame(_ text: String, sequence: UInt8 = 0) throws -> [UInt8] {
        try SMPFrame.request(OSManagement.Echo(text: text), sequence: sequence).bytes
    }

    @Test("answers an echo over IPv4 and IPv6 on an ephemeral port", arguments: ["127.0.0.1", "::1"])
    func echoOverLoopback(host: String) async throws {
        let device = SimulatedDevice(configuration: .udp)
        let server: SimulatedUDPServer
        do {
            server = try SimulatedUDPServer(device: device, host: host, port: 0)
        } catch {
            // IPv6 may be disabled on a CI runner; IPv4 must always work.
            try #require(host != "127.0.0.1", "bind failed: \(error)")
            return
        }
        server.start()
        #expect(server.localAddress.port != 0)
        #expect(server.endpointURL.hasPrefix(host == "::1" ? "udp://[::1]:" : "udp://127.0.0.1:"))
        let client = try UDPSocket(connectingTo: host, port: server.localAddress.port)
        try client.send(Self.echoFrame("ping"))
        let reply = try #require(try await receive(client, timeout: .seconds(30)))
        let frame = try SMPFrame(parsing: reply.bytes)
        #expect(try frame.decodeResponse(to: OSManagement.Echo.self).text == "ping")
        client.close()
        await server.stop()
    }

    /// Every burst shape of the reference file, byte for byte, over UDP.
    @Test("bursts of 3, 4 and 5 chunks are answered as the observed server answered them", arguments: [3, 4, 5])
    func burstShapes(count: Int) async throws {
        let device = SimulatedDevice(configuration: BurstShape.configuration)
        let server = try SimulatedUDPServer(device: device, host: "127.0.0.1", port: 0)
        server.start()
        let client = try UDPSocket(connectingTo: "127.0.0.1", port: server.localAddress.port)
        try client.send(BurstShape.opening())
        let opened = try #require(try await receive(client, timeout: .seconds(30)))
        #expect(try SMPFrame(parsing: opened.bytes).payloadValue() == ["off": 512])
        for index in 0..<count { try client.send(BurstShape.chunk(index)) }
        var answers: [UInt8: CBOR] = [:]
        // Every answer the reference expects, then a moment for any that should not come.
        while answers.count < min(count, 4), let datagram = try await receive(client, timeout: .seconds(30)) {
            let frame = try SMPFrame(parsing: datagram.bytes)
            answers[frame.header.sequence] = try frame.payloadValue()
        }
        if let extra = try await receive(client, timeout: .milliseconds(400)) {
            let frame = try SMPFrame(parsing: extra.bytes)
            answers[frame.header.sequence] = try frame.payloadValue()
        }
        BurstShape.check(answers, burst: count)
        #expect(await device.requestsRefusedForBuffers == (count >= 4 ? 1 : 0))
        #expect(await device.requestsDroppedForBuffers == max(0, count - 4))
        client.close()
        await server.stop()
    }

    @Test("truncates datagrams above the MTU, answers them ECORRUPT, and keeps serving")
    func truncatesOversizedDatagrams() async throws {
        let device = SimulatedDevice(configuration: .init(maximumDatagramSize: 64))
        let server = try SimulatedUDPServer(device: device, host: "127.0.0.1", port: 0)
        server.start()
        let client = try UDPSocket(connectingTo: "127.0.0.1", port: server.localAddress.port)
        let oversized = try Self.echoFrame(String(repeating: "x", count: 100), sequence: 5)
        try client.send(oversized)
        // Zephyr receives into a buffer of the MTU: the header survives and announces more bytes
        // than arrived, so SMP answers rc 9 (ECORRUPT) to the same group, command and sequence.
        let refusal = try #require(try await receive(client, timeout: .seconds(30)))
        let frame = try SMPFrame(parsing: refusal.bytes)
        #expect(frame.header.sequence == 5)
        #expect(frame.header.group == .os)
        #expect(frame.header.command == 0)
        #expect(try frame.payloadValue()["rc"] == 9)
        try client.send(Self.echoFrame("ok", sequence: 6))
        let reply = try #require(try await receive(client, timeout: .seconds(30)))
        #expect(try SMPFrame(parsing: reply.bytes).decodeResponse(to: OSManagement.Echo.self).text == "ok")
        client.close()
        await server.stop()
    }

    // MARK: - Other people's clients

    /// Binds port 1337 on a random 127.x.y.z address for `smpmgr`.
    static func serverOnPort1337(_ device: SimulatedDevice) throws -> (SimulatedUDPServer, String) {
        var generator = SystemRandomNumberGenerator()
        var lastError: (any Error)?
        for _ in 0..<20 {
            #if os(Linux)
                let host =
                    "127.\(UInt8.random(in: 10...250, using: &generator)).\(UInt8.random(in: 1...250, using: &generator)).\(UInt8.random(in: 2...250, using: &generator))"
            #else
                let host = "127.0.0.1"
            #endif
            do {
                return (try SimulatedUDPServer(device: device, host: host, port: 1337), host)
            } catch {
                lastError = error
            }
        }
        throw PeerError(message: "could not bind port 1337 on a loopback address: \(String(describing: lastError))")
    }

    static func smpmgr(_ host: String, _ arguments: [String], directory: URL? = nil) async throws
        -> BoundedProcess.Result
    {
        let tool = try #require(Peers.path(of: "smpmgr"), "smpmgr is not installed")
        return try await BoundedProcess.run(
            tool,
            ["--ip", host, "--timeout", "10"] + arguments,
            timeout: .seconds(90),
            directory: directory
        )
    }

    @Test(
        "smpmgr over UDP: echo, state, signed upload, test, reset, confirm, files, statistics",
        Peers.needed("smpmgr", "imgtool"),
        // A hang guard only (each peer process is killed after Peers.processTimeout): a loaded
        // machine took over 5 minutes for these peer sessions while other builds ran.
        .timeLimit(.minutes(30))
    )
    func smpmgrFirmwareUpgradeOverUDP() async throws {
        let images = try await ImgtoolImages()
        defer { images.remove() }
        let signed = try await images.make(version: "1.2.3")
        let key = try ImagePublicKey(keyFile: Data(contentsOf: images.key))
        // Zephyr's newer answers: smpmgr refuses 3.4's `rc: 0` in statistics answers (see
        // `smpmgrRefusesTheReturnCodeZephyr34PutsInStatistics`).
        let device = SimulatedDevice(configuration: .init(release: .latest, signingKey: key))
        let (server, host) = try Self.serverOnPort1337(device)
        server.start()
        defer { Task { await server.stop() } }
        try await SMPMgrFlow.run(device: device, signed: signed) { arguments, directory in
            try await Self.smpmgr(host, arguments, directory: directory)
        }
        await server.stop()
    }

    @Test(
        "smpclient's typed requests parse every OS answer over UDP on an explicit port",
        Peers.needed("smpclient")
    )
    func smpclientOSGroup() async throws {
        let device = SimulatedDevice(configuration: .init(bufferSize: 1234, bufferCount: 3))
        let server = try SimulatedUDPServer(device: device, host: "127.0.0.1", port: 0)
        server.start()
        let script = """
            import asyncio, sys
            from smpclient import SMPClient
            from smpclient.generics import success
            from smpclient.transport.udp import SMPUDPTransport
            from smpclient.requests import os_management as o
            async def main():
                client = SMPClient(SMPUDPTransport(), "127.0.0.1")
                await client._transport.connect("127.0.0.1", 5.0, int(sys.argv[1]))
                for request in [o.MCUMgrParametersRead(), o.TaskStatisticsRead(), o.MemoryPoolStatisticsRead(),
                                o.DateTimeRead(), o.OSApplicationInfoRead(format="a"), o.BootloaderInformationRead(),
                                o.EchoWrite(d="x")]:
                    r = await client.request(request, timeout_s=5.0)
                    print(type(r).__name__, success(r), r)
                await client.disconnect()
            asyncio.run(main())
            """
        let python = try #require(Peers.python)
        let result = try await BoundedProcess.run(
            python,
            ["-c", script, String(server.localAddress.port)],
            timeout: .seconds(60)
        )
        #expect(result.status == 0, "\(result.summary)")
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 7, "\(result.summary)")
        #expect(lines.allSatisfy { $0.contains(" True ") }, "\(result.summary)")
        #expect(result.stdout.contains("buf_size=1234"))
        #expect(result.stdout.contains("buf_count=3"))
        #expect(result.stdout.contains("bootloader='MCUboot'"))
        await server.stop()
    }

    @Test(
        "mcumgr-toolkit's firmware update runs to completion over UDP",
        Peers.needed("mcumgr_toolkit", "imgtool"),
        // A hang guard only (each peer process is killed after Peers.processTimeout): a loaded
        // machine took over 5 minutes for these peer sessions while other builds ran.
        .timeLimit(.minutes(30))
    )
    func mcumgrToolkitFirmwareUpdate() async throws {
        let images = try await ImgtoolImages()
        defer { images.remove() }
        let signed = try await images.make(version: "1.2.3+7", size: 20_000)
        let device = SimulatedDevice(configuration: .udp)
        let server = try SimulatedUDPServer(device: device, host: "127.0.0.1", port: 0)
        server.start()
        let script = """
            import sys, mcumgr_toolkit as m
            c = m.MCUmgrClient.udp('127.0.0.1', port=int(sys.argv[1]), timeout_ms=5000)
            print("echo", c.os_echo("hello"))
            print("params", c.os_mcumgr_parameters())
            print("bootloader", c.os_bootloader_info())
            data = open(sys.argv[2], 'rb').read()
            c.firmware_update(data)
            print("DONE")
            """
        let python = try #require(Peers.python)
        let result = try await BoundedProcess.run(
            python,
            ["-c", script, String(server.localAddress.port), signed.path],
            timeout: .seconds(180)
        )
        #expect(result.status == 0, "\(result.summary)")
        #expect(result.stdout.contains("echo hello"))
        #expect(result.stdout.contains("DONE"))
        // firmware_update tests the image and resets: once the device is back, the new image runs,
        // unconfirmed.
        await device.waitUntilAnswering()
        let states = await device.imageStates
        let active = try #require(states.first { $0.isActive })
        #expect(active.version == "1.2.3.7")
        #expect(!active.isConfirmed)
        #expect(states.contains { $0.slot == 1 && $0.version == "1.0.0" && $0.isConfirmed })
        await server.stop()
    }
}

extension SimulatedUDPServerTests {
    @Test("mcumgr-toolkit's typed API reads every group's answers", Peers.needed("mcumgr_toolkit"))
    func mcumgrToolkitGroups() async throws {
        let device = SimulatedDevice(configuration: .init(fileHashSHA256: true))
        let server = try SimulatedUDPServer(device: device, host: "127.0.0.1", port: 0)
        server.start()
        let script = """
            import sys, datetime, mcumgr_toolkit as m
            c = m.MCUmgrClient.udp('127.0.0.1', port=int(sys.argv[1]), timeout_ms=5000)
            c.use_auto_frame_size()
            steps = [
                ("tasks", lambda: sorted(c.os_task_statistics().keys())),
                ("pools", lambda: sorted(c.os_memory_pool_statistics().keys())),
                ("setdt", lambda: c.os_set_datetime(datetime.datetime(2025, 6, 1, 12, 0, 0))),
                ("getdt", lambda: c.os_get_datetime()),
                ("info", lambda: c.os_application_info("a")),
                ("state", lambda: c.image_get_state()),
                ("slots", lambda: c.image_slot_info()),
                ("fsup", lambda: c.fs_file_upload("/lfs1/t.bin", bytes(range(256)) * 20)),
                ("fsdown", lambda: c.fs_file_download("/lfs1/t.bin") == bytes(range(256)) * 20),
                ("fsstat", lambda: c.fs_file_status("/lfs1/t.bin")),
                ("fssum", lambda: c.fs_file_checksum("/lfs1/t.bin")),
                ("fssha", lambda: c.fs_file_checksum("/lfs1/t.bin", "sha256")),
                ("fstypes", lambda: c.fs_supported_checksum_types()),
                ("setw", lambda: c.settings_write("app/x", bytes([1, 2]))),
                ("setr", lambda: c.settings_read("app/x")),
                ("save", lambda: c.settings_save()),
                ("shell", lambda: c.shell_execute(["echo", "hi"])),
                ("enum", lambda: c.enum_get_group_ids()),
                ("details", lambda: c.enum_get_group_details()),
                ("stats", lambda: c.stats_list_groups()),
                ("stat", lambda: c.stats_get_group_data("smp_svr_stats")),
                ("erase", lambda: c.zephyr_erase_storage()),
            ]
            for name, step in steps:
                print(name, step(), flush=True)
            """
        let python = try #require(Peers.python)
        let result = try await BoundedProcess.run(
            python,
            ["-c", script, String(server.localAddress.port)],
            timeout: .seconds(120)
        )
        #expect(result.status == 0, "\(result.summary)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 22, "\(result.summary)")
        #expect(lines.contains("fsdown True"), "\(result.summary)")
        #expect(lines.contains { $0.hasPrefix("getdt 2025-06-01") }, "\(result.summary)")
        #expect(lines.contains { $0.hasPrefix("shell hi") }, "\(result.summary)")
        await server.stop()
    }

    @Test(
        "smpmgr over UDP: the revert path (test, reset, reset again without confirm → old image back)",
        Peers.needed("smpmgr", "imgtool"),
        // A hang guard only (each peer process is killed after Peers.processTimeout): a loaded
        // machine took over 5 minutes for these peer sessions while other builds ran.
        .timeLimit(.minutes(30))
    )
    func smpmgrRevertPath() async throws {
        let images = try await ImgtoolImages()
        defer { images.remove() }
        let signed = try await images.make(version: "2.0.0", size: 4_000, seed: 9)
        let device = SimulatedDevice(configuration: .udp)
        let (server, host) = try Self.serverOnPort1337(device)
        server.start()
        var result = try await Self.smpmgr(host, ["image", "upload", signed.path])
        #expect(result.status == 0, "upload: \(result.summary)")
        let hash = try #require(try MCUbootImage(Data(contentsOf: signed)).hash).map { String(format: "%02x", $0) }
            .joined()
        result = try await Self.smpmgr(host, ["image", "state-write", hash])
        #expect(result.status == 0, "test: \(result.summary)")
        result = try await Self.smpmgr(host, ["os", "reset"])
        #expect(result.status == 0, "reset: \(result.summary)")
        await device.waitUntilAnswering()
        result = try await Self.smpmgr(host, ["image", "state-read"])
        #expect(result.status == 0)
        #expect(await device.imageStates.first { $0.isActive }?.version == "2.0.0")
        result = try await Self.smpmgr(host, ["os", "reset"])
        #expect(result.status == 0, "second reset: \(result.summary)")
        await device.waitUntilAnswering()
        let states = await device.imageStates
        #expect(states.first { $0.isActive }?.version == "1.0.0")
        #expect(states.first { $0.isActive }?.isConfirmed == true)
        result = try await Self.smpmgr(host, ["image", "state-read"])
        #expect(result.stdout.contains("1.0.0"))
        await server.stop()
    }
}

/// The `smpmgr` acceptance flow, shared by the UDP and serial tests.
enum SMPMgrFlow {
    static func run(
        device: SimulatedDevice,
        signed: URL,
        smpmgr: (_ arguments: [String], _ directory: URL?) async throws -> BoundedProcess.Result
    ) async throws {
        let work = signed.deletingLastPathComponent()
        var result = try await smpmgr(["os", "echo", "hello simulator"], nil)
        #expect(result.status == 0, "echo: \(result.summary)")
        #expect(result.stdout.contains("hello simulator"))

        result = try await smpmgr(["image", "state-read"], nil)
        #expect(result.status == 0, "state-read: \(result.summary)")
        #expect(result.stdout.contains("1.0.0"))

        result = try await smpmgr(["image", "upload", signed.path], nil)
        #expect(result.status == 0, "upload: \(result.summary)")
        let uploaded = try MCUbootImage(Data(contentsOf: signed))
        let hash = try #require(uploaded.hash)
        var states = await device.imageStates
        try #require(states.contains { $0.slot == 1 && $0.version == "1.2.3" && $0.hash == Data(hash) }, "\(states)")

        let hashHex = hash.map { String(format: "%02x", $0) }.joined()
        result = try await smpmgr(["image", "state-write", hashHex], nil)
        #expect(result.status == 0, "state-write: \(result.summary)")
        states = await device.imageStates
        #expect(states.contains { $0.slot == 1 && $0.isPending && !$0.isPermanent }, "\(states)")

        result = try await smpmgr(["os", "reset"], nil)
        #expect(result.status == 0, "reset: \(result.summary)")
        // Zephyr answers the reset, runs on for 250 ms and reboots: wait as a person would.
        await device.waitUntilAnswering()
        states = await device.imageStates
        let running = try #require(states.first { $0.isActive })
        #expect(running.version == "1.2.3")
        #expect(!running.isConfirmed)

        result = try await smpmgr(["image", "state-write", "--confirm"], nil)
        #expect(result.status == 0, "confirm: \(result.summary)")
        states = await device.imageStates
        #expect(states.contains { $0.isActive && $0.isConfirmed && $0.version == "1.2.3" }, "\(states)")

        // Files: upload, then download into another name, compare.
        let local = work.appendingPathComponent("notes.txt")
        let content = Data((0..<3_000).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) })
        try content.write(to: local)
        result = try await smpmgr(["file", "upload", local.path, "/lfs1/notes.txt"], nil)
        #expect(result.status == 0, "file upload: \(result.summary)")
        let back = work.appendingPathComponent("back.txt")
        result = try await smpmgr(["file", "download", "/lfs1/notes.txt", back.path], nil)
        #expect(result.status == 0, "file download: \(result.summary)")
        #expect((try? Data(contentsOf: back)) == content)

        result = try await smpmgr(["statistics", "list"], nil)
        #expect(result.status == 0, "statistics list: \(result.summary)")
        #expect(result.stdout.contains("smp_svr_stats"))
        result = try await smpmgr(["statistics", "smp_svr_stats"], nil)
        #expect(result.status == 0, "statistics group: \(result.summary)")
        #expect(result.stdout.contains("ticks"))
    }
}

extension SimulatedUDPServerTests {
    /// Zephyr 3.4's statistics handlers put `"rc": 0` into their success answers (observed on a
    /// real server, `zephyr-observed.md`). `smp`'s response models forbid extra keys, so smpmgr
    /// fails on a real 3.4 device the same way: a peer bug, shown here rather than hidden by the
    /// simulator.
    @Test(
        "smpmgr refuses the rc: 0 Zephyr 3.4 puts in statistics answers",
        Peers.needed("smpmgr")
    )
    func smpmgrRefusesTheReturnCodeZephyr34PutsInStatistics() async throws {
        let device = SimulatedDevice(configuration: .init(release: .v3_4))
        let (server, host) = try Self.serverOnPort1337(device)
        server.start()
        let result = try await Self.smpmgr(host, ["statistics", "list"])
        #expect(result.status != 0, "\(result.summary)")
        #expect(result.stdout.contains("extra_forbidden") || result.stderr.contains("extra_forbidden"))
        #expect(result.stdout.contains("rc") || result.stderr.contains("rc"))
        await server.stop()
        // The same answer without the legacy code (newer Zephyr) passes.
        let newer = SimulatedDevice(configuration: .init(release: .latest))
        let (second, newerHost) = try Self.serverOnPort1337(newer)
        second.start()
        let passing = try await Self.smpmgr(newerHost, ["statistics", "list"])
        #expect(passing.status == 0, "\(passing.summary)")
        await second.stop()
    }
}
