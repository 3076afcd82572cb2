import Foundation
import SMPTestSupport

/// Runs imgtool (the independent oracle) in a private temporary folder.
final class ImgtoolWorkspace {
    let directory: URL
    /// The deterministic 4096-byte payload `bytes(range(256)) * 16` used throughout peers.md §8.
    static let payload: [UInt8] = Array((0..<16).flatMap { _ in (0...255).map(UInt8.init) })

    init() throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("mcuboot-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(Self.payload).write(to: path("app.bin"))
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    func path(_ name: String) -> URL { directory.appendingPathComponent(name) }

    /// `imgtool keygen -t TYPE`; returns the private key file.
    @discardableResult
    func keygen(_ type: String) async throws -> URL {
        let key = path("\(type).pem")
        if !FileManager.default.fileExists(atPath: key.path) {
            _ = try await Peers.run("imgtool", ["keygen", "-k", key.path, "-t", type])
        }
        return key
    }

    /// `imgtool create` with the peers.md §8 defaults plus `arguments`; returns the image bytes.
    func create(_ name: String, _ arguments: [String], payload: String = "app.bin") async throws -> Data {
        let output = path(name)
        _ = try await Peers.run(
            "imgtool",
            ["create", "--align", "4", "--header-size", "0x200", "--slot-size", "0x40000", "--pad-header"]
                + arguments + [path(payload).path, output.path]
        )
        return try Data(contentsOf: output)
    }

    /// `imgtool dumpinfo -f json` plus the digest `imgtool verify` prints.
    func dumpinfo(_ name: String) async throws -> DumpInfo {
        let json = try await Peers.run("imgtool", ["dumpinfo", "-f", "json", path(name).path])
        guard let object = try JSONSerialization.jsonObject(with: json) as? [String: Any] else {
            throw DumpInfo.Malformed(what: "not an object")
        }
        return try DumpInfo(object, digest: await verify(name).digest)
    }

    /// `imgtool verify [-k key]`: whether it validated, and the digest it printed.
    func verify(_ name: String, key: URL? = nil) async throws -> (ok: Bool, digest: String?, output: String) {
        guard let tool = Peers.path(of: "imgtool") else { throw PeerError(message: "imgtool is not installed") }
        let arguments = ["verify"] + (key.map { ["-k", $0.path] } ?? []) + [path(name).path]
        let result = try await Peers.runProcess(tool, arguments, stdin: nil)
        let text = String(decoding: result.stdout, as: UTF8.self)
        let digest = text.split(separator: "\n").first { $0.hasPrefix("Image digest: ") }
            .map { String($0.dropFirst("Image digest: ".count)) }
        return (result.status == 0 && text.contains("Image was correctly validated"), digest, text)
    }

    /// Writes bytes to a file in the workspace.
    func write(_ data: Data, _ name: String) throws {
        try data.write(to: path(name))
    }
}
