import Foundation
import HTTPTypes
import HummingbirdTesting
import MCUmgr
import SMPCore
import SMPSimulator
import Testing

@Suite struct APIImagesTests {
    @Test func theSlotTableHasEveryColumn() async throws {
        let harness = try WebHarness()
        try await harness.test { client in
            let id = try await client.addDevice(harness)
            let table = try await client.get("/api/devices/\(id)/images", harness).object()
            let images = try #require(table["images"] as? [[String: Any]])
            let running = try #require(images.first)
            #expect(running["image"] as? Int == 0)
            #expect(running["slot"] as? Int == 0)
            #expect(running["version"] as? String == "1.0.0")
            #expect((running["hash"] as? String)?.count == 64)
            #expect((running["flags"] as? [String])?.contains("active") == true)
        }
    }

    /// An image marked for test holds slot 1: erasing it is the device's refusal, said with
    /// what holds the slot and the commands that clear it, and nothing changes.
    @Test func erasingASlotWithAPendingTestImageIsRefusedInTheCLIsWords() async throws {
        let harness = try WebHarness()
        try await harness.test { client in
            let id = try await client.addDevice(harness)
            let sent = try await client.sendFirmware(WebTestImage.bytes(), name: "app.bin", harness).object()
            let firmware = try #require(sent["id"] as? String)
            let start = try await client.post(
                "/api/devices/\(id)/upgrade",
                #"{"firmware": "\#(firmware)", "mode": "upload-only"}"#,
                harness
            )
            #expect(start.status == .ok, "\(start.text)")
            let done = try await client.waitForOperation(id, harness) { $0["finished"] as? Bool == true }
            #expect(done["status"] as? String == "succeeded", "\(done)")
            let hash = try #require(
                await harness.device.imageStates.first { $0.slot == 1 }?.hash.map {
                    $0.map { String(format: "%02x", $0) }.joined()
                }
            )
            // A prefix, as the command line takes it.
            let tested = try await client.post(
                "/api/devices/\(id)/images/test",
                #"{"hash": "\#(hash.prefix(8))"}"#,
                harness
            )
            #expect(tested.status == .ok, "\(tested.text)")
            let before = await harness.device.imageStates
            #expect(before.first { $0.slot == 1 }?.isPending == true)

            let erase = try await client.post("/api/devices/\(id)/images/erase", #"{"slot": 1}"#, harness)
            #expect(erase.status == .conflict)
            let line = try #require(erase.errorLine)
            #expect(line.hasPrefix("the device refused: "), "\(line)")
            #expect(line.contains("nothing was changed"), "\(line)")
            #expect(line.contains("`mcumgr --conn sim:// os reset`"), "\(line)")
            #expect(await harness.device.imageStates == before)
        }
    }

    @Test func aHashPrefixThatMatchesNothingIsRefused() async throws {
        let harness = try WebHarness()
        try await harness.test { client in
            let id = try await client.addDevice(harness)
            let short = try await client.post("/api/devices/\(id)/images/test", #"{"hash": "ab"}"#, harness)
            #expect(short.status == .badRequest)
            #expect(short.errorLine?.contains("too short") == true)
            let none = try await client.post("/api/devices/\(id)/images/test", #"{"hash": "fefefefe"}"#, harness)
            #expect(none.status == .conflict)
            #expect(none.errorLine?.hasPrefix("no image on the device has a hash starting with fefefefe") == true)
        }
    }
}
