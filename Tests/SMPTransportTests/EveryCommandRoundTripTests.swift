import Foundation
import MCUmgr
import MCUmgrDFU
import SMPCore
import SMPPOSIX
import SMPSerialTransport
import SMPSimulator
import SMPUDPTransport
import Testing

/// Every command of every group goes through the real client and a real transport to the
/// simulated device and back: in-process loopback, UDP on 127.0.0.1, and a pseudo-terminal
/// with console and with raw framing.
@Suite(.serialized)
struct EveryCommandRoundTripTests {
    enum Link: String, CaseIterable, Sendable {
        case loopback, udp, consoleSerial, rawSerial
    }

    /// One step: a command and what must come back. `nil` means success; a name means the
    /// device must refuse with exactly that code (groups Zephyr does not implement).
    struct Step: Sendable {
        var name: String
        var expectedRefusal: String?
        var run: @Sendable (SMPClient) async throws -> Void
    }

    static let imageFile: Data = {
        var bytes = [UInt8](repeating: 0xa5, count: 4096)
        bytes.replaceSubrange(0..<4, with: [0x3d, 0xb8, 0xf3, 0x96])
        bytes.replaceSubrange(8..<16, with: [0x00, 0x02, 0, 0, 0x00, 0x0e, 0, 0])
        return Data(bytes)
    }()

    static func step(
        _ name: String,
        refusal: String? = nil,
        _ run: @escaping @Sendable (SMPClient) async throws -> Void
    ) -> Step {
        Step(name: name, expectedRefusal: refusal, run: run)
    }

    static let steps: [Step] = [
        step("os echo") { client in
            let answered = try await client.send(OSManagement.Echo(text: "round trip")).text == "round trip"
            #expect(answered)
        },
        step("os console echo (MCUboot only)", refusal: "ENOTSUP") { client in
            _ = try await client.send(OSManagement.ConsoleEchoControl(echo: 0))
        },
        step("os taskstat") { client in
            let answered = try await client.send(OSManagement.TaskStatistics()).tasks.entries.isEmpty == false
            #expect(answered)
        },
        step("os mpstat") { client in _ = try await client.send(OSManagement.MemoryPoolStatistics()) },
        step("os datetime set") { client in
            _ = try await client.send(OSManagement.DateTimeWrite(dateTime: "2026-11-22T16:00:00"))
        },
        step("os datetime get") { client in
            let answered = try await client.send(OSManagement.DateTimeRead()).dateTime.hasPrefix("2026-11-22T16:00")
            #expect(answered)
        },
        step("os params") { client in
            let answered = try await client.send(OSManagement.MCUmgrParameters()).bufferSize > 0
            #expect(answered)
        },
        step("os info") { client in
            let answered = try await client.send(OSManagement.ApplicationInfo(format: "a")).output.isEmpty == false
            #expect(answered)
        },
        step("os bootloader") { client in
            let answered = try await client.send(OSManagement.BootloaderInfo()).bootloader == "MCUboot"
            #expect(answered)
        },
        step("os bootloader mode") { client in
            let answered = try await client.send(OSManagement.BootloaderInfo(query: "mode")).mode != nil
            #expect(answered)
        },
        step("image state read") { client in
            let answered = try await client.send(ImageManagement.StateRead()).images.isEmpty == false
            #expect(answered)
        },
        step("image slot info") { client in
            let answered = try await client.send(ImageManagement.SlotInfo()).images.isEmpty == false
            #expect(answered)
        },
        step("image upload") { client in
            let progress = try await client.uploadAndWait(ImageUpload(data: imageFile), options: .init(window: 2))
            #expect(progress.bytesConfirmed == imageFile.count)
        },
        step("image erase") { client in _ = try await client.send(ImageManagement.Erase(slot: 1)) },
        step("image test of an unknown hash", refusal: "HASH_NOT_FOUND") { client in
            _ = try await client.send(ImageManagement.StateWrite(hash: Data(repeating: 1, count: 32), confirm: false))
        },
        step("image confirm running") { client in _ = try await client.send(ImageManagement.StateWrite(confirm: true))
        },
        step("stat list") { client in
            let answered = try await client.send(StatisticsManagement.ListGroups()).groups.contains("smp_svr_stats")
            #expect(answered)
        },
        step("stat read") { client in _ = try await client.send(StatisticsManagement.GroupData(name: "smp_svr_stats"))
        },
        step("settings write") { client in
            _ = try await client.send(SettingsManagement.Write(name: "app/name", value: Data("fob".utf8)))
        },
        step("settings read") { client in
            let answered = try await client.send(SettingsManagement.Read(name: "app/name")).value == Data("fob".utf8)
            #expect(answered)
        },
        step("settings commit") { client in _ = try await client.send(SettingsManagement.Commit()) },
        step("settings save") { client in _ = try await client.send(SettingsManagement.Save()) },
        step("settings load") { client in _ = try await client.send(SettingsManagement.Load()) },
        step("settings delete") { client in _ = try await client.send(SettingsManagement.Delete(name: "app/name")) },
        step("fs upload") { client in
            try await client.uploadAndWait(
                FileUpload(data: Data(repeating: 0x42, count: 5000), name: "/lfs1/round.bin"),
                options: .init(window: 2)
            )
        },
        step("fs status") { client in
            let answered = try await client.send(FileManagement.Status(name: "/lfs1/round.bin")).length == 5000
            #expect(answered)
        },
        step("fs hash crc32") { client in
            _ = try await client.send(FileManagement.Hash(name: "/lfs1/round.bin", type: .init(rawValue: "crc32")))
        },
        step("fs hash sha256") { client in
            _ = try await client.send(FileManagement.Hash(name: "/lfs1/round.bin", type: .init(rawValue: "sha256")))
        },
        step("fs types") { client in _ = try await client.send(FileManagement.SupportedHashTypes()) },
        step("fs download") { client in
            let answer = try await client.send(FileManagement.Download(offset: 0, name: "/lfs1/round.bin"))
            #expect(answer.length == 5000 && !answer.data.isEmpty)
        },
        step("fs close") { client in _ = try await client.send(FileManagement.Close()) },
        step("fs escape attempt", refusal: "FILE_INVALID_NAME") { client in
            _ = try await client.send(FileManagement.Status(name: "/lfs1/../etc/passwd"))
        },
        step("shell exec") { client in
            let answered = try await client.send(ShellManagement.Execute(arguments: ["echo", "hi"])).output.contains(
                "hi"
            )
            #expect(answered)
        },
        step("enum count") { client in
            let answered = try await client.send(EnumerationManagement.GroupCount()).count > 0
            #expect(answered)
        },
        step("enum list") { client in
            let answered = try await client.send(EnumerationManagement.ListGroups()).groups.contains(1)
            #expect(answered)
        },
        step("enum single") { client in _ = try await client.send(EnumerationManagement.GroupAtIndex(index: 0)) },
        step("enum details") { client in _ = try await client.send(EnumerationManagement.GroupDetails()) },
        step("basic erase storage") { client in _ = try await client.send(ZephyrBasicManagement.EraseStorage()) },
        step("suit manifests") { client in _ = try await client.send(SUITManagement.ManifestList()) },
        step("log list (Mynewt only)", refusal: "ENOTSUP") { client in _ = try await client.send(LogManagement.List())
        },
        step("crash trigger (Mynewt only)", refusal: "ENOTSUP") { client in
            _ = try await client.send(CrashManagement.Trigger(type: "div0"))
        },
        step("run list (Mynewt only)", refusal: "ENOTSUP") { client in _ = try await client.send(RunManagement.List())
        },
        step("os reset") { client in _ = try await client.send(OSManagement.Reset()) },
    ]

    static func withLink<T>(_ link: Link, _ body: (SMPClient) async throws -> T) async throws -> T {
        // With the optional SHA-256 file hash built in, so that every command has a success
        // answer to carry (the default, observed build has crc32 only).
        let device = SimulatedDevice(configuration: .init(bufferSize: 1024, fileHashSHA256: true))
        let transport: any SMPTransport
        var stopServer: @Sendable () async -> Void = {}
        switch link {
        case .loopback:
            transport = LoopbackTransport(device: device)
        case .udp:
            let server = try SimulatedUDPServer(device: device, host: "127.0.0.1", port: 0)
            server.start()
            stopServer = { await server.stop() }
            transport = UDPTransport(host: "127.0.0.1", port: server.localAddress.port)
        case .consoleSerial, .rawSerial:
            let raw = link == .rawSerial
            let server = try SimulatedSerialServer(device: device, framing: raw ? .raw : .console, baudRate: nil)
            server.start()
            stopServer = { await server.stop() }
            transport = SerialTransport(path: server.slavePath, baudRate: 115_200, framing: raw ? .raw : .console())
        }
        do {
            // Nothing is lost here, so a timeout no stall of the machine reaches: a shell command
            // is sent once, and a 2 s wait for its answer failed over a pty in a full run.
            let client = try await SMPClient.connect(transport, configuration: .init(timeout: .seconds(20), retries: 2))
            let result: T
            do {
                result = try await body(client)
            } catch {
                await client.close()
                throw error
            }
            await client.close()
            await stopServer()
            return result
        } catch {
            await stopServer()
            throw error
        }
    }

    @Test(arguments: Link.allCases)
    func everyCommandRoundTrips(_ link: Link) async throws {
        try await Self.withLink(link) { client in
            for step in Self.steps {
                do {
                    try await step.run(client)
                    #expect(
                        step.expectedRefusal == nil,
                        "\(step.name) over \(link): expected \(step.expectedRefusal ?? "")"
                    )
                } catch let error as SMPDeviceError {
                    #expect(error.codeName == step.expectedRefusal, "\(step.name) over \(link): \(error)")
                } catch {
                    Issue.record("\(step.name) over \(link): \(error)")
                }
            }
        }
    }
}
