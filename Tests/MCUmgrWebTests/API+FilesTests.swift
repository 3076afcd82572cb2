import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import SMPSimulator
import Testing

@Suite struct APIFilesTests {
    /// Bytes that are not all alike, so a misplaced chunk shows.
    static func pattern(_ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) } }

    /// Upload, then download: the same bytes, progress in every snapshot, the path remembered.
    @Test func aFileRoundTripsWithProgress() async throws {
        let harness = try WebHarness()
        let bytes = Self.pattern(20_000)
        try await harness.test { client in
            let id = try await client.addDevice(harness)
            let started = try await client.upload(bytes, to: "/lfs1/data.bin", device: id, harness)
            #expect(started.status == .ok, "\(started.text)")
            let uploaded = try await client.snapshots(id, harness)
            let up = try #require(uploaded.last)
            #expect(up["kind"] as? String == "upload")
            #expect(up["status"] as? String == "succeeded", "\(up)")
            let upProgress = try #require(up["progress"] as? [String: Any])
            #expect(upProgress["bytes"] as? Int == bytes.count)
            #expect(upProgress["total"] as? Int == bytes.count)
            #expect(uploaded.allSatisfy { ($0["progress"] as? [String: Any])?["total"] as? Int == bytes.count })
            let said = try #require((up["result"] as? [String])?.first)
            #expect(said.hasPrefix("uploaded local.bin to /lfs1/data.bin: 19.5 KiB in "), "\(said)")

            let download = try await client.post(
                "/api/devices/\(id)/files/download",
                #"{"path": "/lfs1/data.bin"}"#,
                harness
            )
            #expect(download.status == .ok, "\(download.text)")
            let downloaded = try await client.snapshots(id, harness)
            let down = try #require(downloaded.last)
            #expect(down["kind"] as? String == "download")
            #expect(down["status"] as? String == "succeeded", "\(down)")
            let downProgress = try #require(down["progress"] as? [String: Any])
            #expect(downProgress["bytes"] as? Int == bytes.count)
            #expect(downProgress["percent"] as? Int == 100)

            let content = try await client.get("/api/devices/\(id)/files/content", harness)
            #expect(content.status == .ok)
            #expect(Array(content.body.readableBytesView) == bytes)
            #expect(content.headers[.contentDisposition] == #"attachment; filename="data.bin""#)
            let paths = try await client.get("/api/devices/\(id)/files", harness).object()
            #expect(paths["paths"] as? [String] == ["/lfs1/data.bin"])
        }
    }

    @Test(arguments: [
        ("lfs1/a.txt", "does not start with /"),
        ("/lfs1/", "names a folder"),
        ("/lfs1/../etc/passwd", "contains . or .."),
        ("", "give the path on the device"),
    ])
    func aBadPathIsRefusedBeforeAnythingIsSent(path: String, words: String) async throws {
        let harness = try WebHarness()
        try await harness.test { client in
            let id = try await client.addDevice(harness)
            let response = try await client.upload([1, 2, 3], to: path, device: id, harness)
            #expect(response.status == .badRequest)
            let line = try #require(response.errorLine)
            #expect(line.hasPrefix("Device path: ") && line.contains(words), "\(line)")
            let operation = try await client.get("/api/devices/\(id)/operation", harness).object()
            #expect(operation["operation"] == nil || operation["operation"] is NSNull)
        }
    }

    @Test func aFileOverTheLimitIsRefusedNamingTheLimit() async throws {
        let harness = try WebHarness(uploadLimit: 1024)
        try await harness.test { client in
            let id = try await client.addDevice(harness)
            let response = try await client.upload(Self.pattern(2048), to: "/lfs1/big.bin", device: id, harness)
            #expect(response.status == .contentTooLarge)
            #expect(response.errorLine == "the file is larger than the 1 KiB limit")
        }
    }

    @Test func aMissingFileIsTheDevicesRefusal() async throws {
        let harness = try WebHarness()
        try await harness.test { client in
            let id = try await client.addDevice(harness)
            let response = try await client.post(
                "/api/devices/\(id)/files/download",
                #"{"path": "/lfs1/none"}"#,
                harness
            )
            #expect(response.status == .conflict)
            #expect(response.errorLine?.isEmpty == false)
            #expect(response.errorLine?.contains("\n") == false)
        }
    }

    /// A paused upload keeps the device busy: a second transfer, a shell command, a download and a
    /// reconnect are refused naming it; cancelled, it ends as cancelled.
    @Test func aSecondOperationOnABusyDeviceIsRefused() async throws {
        let harness = try WebHarness()
        try await harness.test { client in
            let id = try await client.addDevice(harness)
            let started = try await client.upload(Self.pattern(1 << 20), to: "/lfs1/big.bin", device: id, harness)
            #expect(started.status == .ok, "\(started.text)")
            let paused = try await client.post("/api/devices/\(id)/operation/pause", "{}", harness).object()
            #expect((paused["operation"] as? [String: Any])?["status"] as? String == "paused", "\(paused)")

            let second = try await client.upload([1], to: "/lfs1/other.bin", device: id, harness)
            #expect(second.status == .conflict)
            #expect(
                second.errorLine
                    == "an upload to /lfs1/big.bin is running on this device; wait for it to end or cancel it"
            )
            let shell = try await client.post("/api/devices/\(id)/shell", #"{"command": "kernel version"}"#, harness)
            #expect(shell.status == .conflict)
            let download = try await client.post("/api/devices/\(id)/files/download", #"{"path": "/lfs1/a"}"#, harness)
            #expect(download.status == .conflict)
            // The transfer uses the session's client: a reconnect would end it.
            #expect(try await client.post("/api/devices/\(id)/reconnect", "{}", harness).status == .conflict)

            #expect(try await client.post("/api/devices/\(id)/operation/cancel", "{}", harness).status == .ok)
            let last = try #require(try await client.snapshots(id, harness).last)
            #expect(last["status"] as? String == "cancelled", "\(last)")
            #expect(try await client.get("/api/devices/\(id)/files/content", harness).status == .notFound)
        }
    }

    /// The group has no listing: the device's shell lists a folder (`fs ls`), and a folder it
    /// cannot open is said in the shell's words.
    @Test func aFolderListingIsTheShellsAnswer() async throws {
        let harness = try WebHarness()
        try await harness.test { client in
            let id = try await client.addDevice(harness)
            _ = try await client.upload([1, 2, 3], to: "/lfs1/notes.txt", device: id, harness)
            _ = try await client.snapshots(id, harness)
            let listing = try await client.get("/api/devices/\(id)/files/list?directory=/lfs1", harness).object()
            #expect(listing["directory"] as? String == "/lfs1")
            #expect(listing["output"] as? String == "notes.txt\n")
            #expect(listing["return_code"] as? Int == 0)
            let missing = try await client.get("/api/devices/\(id)/files/list?directory=/none", harness).object()
            #expect(missing["failure"] as? String == "'fs ls /none' returned -8 on the device")
        }
    }
}
