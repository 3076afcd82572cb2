import Foundation
import HTTPTypes
import HummingbirdTesting
import MCUmgr
import SMPCore
import SMPSimulator
import Testing

@Suite struct APIUpgradeTests {
    /// A device that reboots quickly, as in the engine's own tests.
    static let quickReboot = SimulatedDevice.Configuration(
        bufferSize: 512,
        resetDelay: .milliseconds(10),
        bootTime: .milliseconds(200)
    )

    @Test func aFirmwareFileIsShownBeforeAnythingIsSent() async throws {
        let harness = try WebHarness()
        let before = await harness.device.imageStates
        try await harness.test { client in
            let response = try await client.sendFirmware(WebTestImage.bytes(version: "2.1.0"), name: "app.bin", harness)
            #expect(response.status == .ok, "\(response.text)")
            let info = try response.object()
            let images = try #require(info["images"] as? [[String: Any]])
            #expect(images.first?["version"] as? String == "2.1.0")
            #expect((info["lines"] as? [String])?.isEmpty == false)
        }
        #expect(await harness.device.imageStates == before)
    }

    @Test func aFileOverTheLimitIsRefusedNamingTheLimit() async throws {
        let harness = try WebHarness(uploadLimit: 1024)
        try await harness.test { client in
            let response = try await client.sendFirmware(WebTestImage.bytes(), name: "app.bin", harness)
            #expect(response.status == .contentTooLarge)
            #expect(response.errorLine == "the firmware file is larger than the 1 KiB limit")
        }
    }

    @Test func aFileThatIsNoFirmwareIsOneLine() async throws {
        let harness = try WebHarness()
        try await harness.test { client in
            let response = try await client.sendFirmware(Array("hello".utf8), name: "notes.txt", harness)
            #expect(response.status == .unprocessableContent)
            #expect(response.errorLine?.hasPrefix("notes.txt") == true)
        }
    }

    /// Upload, test, reset, reconnect, confirm, verify — followed over the live events to the
    /// verified result; the slots are then read by a client of our own, not through the page.
    @Test func testAndConfirmEndsVerifiedAndTheSlotsChanged() async throws {
        let harness = try WebHarness(device: Self.quickReboot)
        try await harness.test { client in
            let id = try await client.addDevice(harness)
            let sent = try await client.sendFirmware(WebTestImage.bytes(version: "2.0.0"), name: "app.bin", harness)
            let firmware = try #require(try sent.object()["id"] as? String)
            let start = try await client.post(
                "/api/devices/\(id)/upgrade",
                #"{"firmware": "\#(firmware)", "mode": "test-and-confirm"}"#,
                harness
            )
            #expect(start.status == .ok, "\(start.text)")
            // The stream ends with the operation.
            let stream = try await client.get("/api/devices/\(id)/operation/events", harness)
            #expect(stream.headers[.contentType] == "text/event-stream")
            let snapshots = try stream.text.split(separator: "\n").filter { $0.hasPrefix("data: ") }.map { line in
                try #require(try JSONSerialization.jsonObject(with: Data(line.dropFirst(6).utf8)) as? [String: Any])
            }
            let last = try #require(snapshots.last)
            #expect(last["status"] as? String == "succeeded", "\(last)")
            #expect(last["finished"] as? Bool == true)
            #expect((last["result"] as? [String])?.isEmpty == false)
            #expect((last["plan"] as? [String])?.isEmpty == false)
            let progress = try #require(last["progress"] as? [String: Any])
            #expect(progress["percent"] as? Int == 100)
            let steps = try #require(last["steps"] as? [[String: Any]])
            #expect(steps.allSatisfy { $0["outcome"] as? String == "done" }, "\(steps)")
            let revisions = snapshots.compactMap { $0["revision"] as? Int }
            #expect(revisions == revisions.sorted())
        }
        // An independent client, straight to the device.
        let check = try await SMPClient.connect(LoopbackTransport(device: harness.device))
        let slots = try await check.send(ImageManagement.StateRead()).images
        await check.close()
        let running = try #require(slots.first { $0.isActive })
        #expect(running.version == "2.0.0")
        #expect(running.isConfirmed)
    }

    /// Pause, resume, a second start refused while it runs, cancel mid-upload, then the same
    /// file again resumes where the device stopped.
    @Test func cancelMidUploadThenResume() async throws {
        var configuration = Self.quickReboot
        configuration.writeBytesPerSecond = 64 * 1024
        let harness = try WebHarness(device: configuration)
        try await harness.test { client in
            let id = try await client.addDevice(harness)
            let sent = try await client.sendFirmware(
                WebTestImage.bytes(payloadSize: 160 * 1024),
                name: "big.bin",
                harness
            )
            let firmware = try #require(try sent.object()["id"] as? String)
            let body = #"{"firmware": "\#(firmware)", "mode": "upload-only"}"#
            #expect(try await client.post("/api/devices/\(id)/upgrade", body, harness).status == .ok)
            _ = try await client.waitForOperation(id, harness) {
                (($0["progress"] as? [String: Any])?["bytes"] as? Int ?? 0) > 0
            }

            let second = try await client.post("/api/devices/\(id)/upgrade", body, harness)
            #expect(second.status == .conflict)
            #expect(second.errorLine?.contains("an upgrade with big.bin is running") == true)
            let reset = try await client.post("/api/devices/\(id)/reset", "{}", harness)
            #expect(reset.status == .conflict)

            let paused = try await client.post("/api/devices/\(id)/operation/pause", "{}", harness).object()
            #expect((paused["operation"] as? [String: Any])?["status"] as? String == "paused")
            let resumed = try await client.post("/api/devices/\(id)/operation/resume", "{}", harness).object()
            #expect((resumed["operation"] as? [String: Any])?["status"] as? String == "running")

            #expect(try await client.post("/api/devices/\(id)/operation/cancel", "{}", harness).status == .ok)
            let cancelled = try await client.waitForOperation(id, harness) { $0["finished"] as? Bool == true }
            #expect(cancelled["status"] as? String == "cancelled", "\(cancelled)")
            let stopped = try #require(cancelled["progress"] as? [String: Any])
            #expect((stopped["bytes"] as? Int ?? 0) < (stopped["total"] as? Int ?? 0))

            #expect(try await client.post("/api/devices/\(id)/upgrade", body, harness).status == .ok)
            let finished = try await client.waitForOperation(id, harness) { $0["finished"] as? Bool == true }
            #expect(finished["status"] as? String == "succeeded", "\(finished)")
            let messages = try #require(finished["messages"] as? [String])
            #expect(messages.contains { $0.contains("resuming from there") }, "\(messages)")
        }
        let slot = await harness.device.imageStates.first { $0.slot == 1 }
        #expect(slot?.version == "2.0.0")
    }

    @Test func anUnknownModeIsRefused() async throws {
        let harness = try WebHarness()
        try await harness.test { client in
            let id = try await client.addDevice(harness)
            let sent = try await client.sendFirmware(WebTestImage.bytes(), name: "app.bin", harness)
            let firmware = try #require(try sent.object()["id"] as? String)
            let response = try await client.post(
                "/api/devices/\(id)/upgrade",
                #"{"firmware": "\#(firmware)", "mode": "yolo"}"#,
                harness
            )
            #expect(response.status == .badRequest)
            #expect(response.errorLine?.hasPrefix("Mode: 'yolo' is not one of test-and-confirm") == true)
        }
    }
}

extension APIUpgradeTests {
    /// A test image runs unconfirmed: another upgrade would need its revert target's slot, and
    /// is refused before anything changes, in the command line's words.
    @Test func anUpgradeIsRefusedWhileATestImageRunsUnconfirmed() async throws {
        let harness = try WebHarness(device: Self.quickReboot)
        try await harness.test { client in
            let id = try await client.addDevice(harness)
            let v2 = try await client.sendFirmware(WebTestImage.bytes(version: "2.0.0"), name: "v2.bin", harness)
            let first = try #require(try v2.object()["id"] as? String)
            let tested = try await client.post(
                "/api/devices/\(id)/upgrade",
                #"{"firmware": "\#(first)", "mode": "test-only"}"#,
                harness
            )
            #expect(tested.status == .ok)
            let done = try await client.waitForOperation(id, harness) { $0["finished"] as? Bool == true }
            #expect(done["status"] as? String == "succeeded", "\(done)")
            let before = await harness.device.imageStates
            #expect(before.contains { $0.isActive && !$0.isConfirmed && $0.version == "2.0.0" })

            let v3 = try await client.sendFirmware(WebTestImage.bytes(version: "3.0.0"), name: "v3.bin", harness)
            let second = try #require(try v3.object()["id"] as? String)
            let start = try await client.post(
                "/api/devices/\(id)/upgrade",
                #"{"firmware": "\#(second)", "mode": "test-and-confirm"}"#,
                harness
            )
            #expect(start.status == .ok)
            let refused = try await client.waitForOperation(id, harness) { $0["finished"] as? Bool == true }
            #expect(refused["status"] as? String == "failed")
            let line = try #require(refused["error"] as? String)
            #expect(line.contains("2.0.0 runs unconfirmed (a test)"), "\(line)")
            #expect(
                line.contains("nothing was changed: keep 2.0.0 with `mcumgr --conn sim:// image confirm "),
                "\(line)"
            )
            #expect(line.hasSuffix("or let it revert with `mcumgr --conn sim:// os reset`, then run the upgrade again"))
            #expect(await harness.device.imageStates == before)
        }
    }
}
