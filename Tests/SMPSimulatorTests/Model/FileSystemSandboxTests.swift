import Foundation
import Testing

@testable import SMPSimulator

@Suite("FileSystemSandbox")
struct FileSystemSandboxTests {
    let root: URL
    let sandbox: FileSystemSandbox

    init() {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("sandbox-\(UUID().uuidString)/lfs1")
        sandbox = FileSystemSandbox(root: root)
    }

    enum Expected: Sendable {
        case inside(String)
        case noMountPoint
        case invalidName
    }

    static let paths: [(String, Expected)] = [
        ("/lfs1/a.txt", .inside("a.txt")),
        ("/lfs1//dir/b.bin", .inside("dir/b.bin")),
        ("/lfs1", .inside("")),
        ("/lfs1/", .inside("")),
        ("lfs1/a.txt", .invalidName),
        ("a.txt", .invalidName),
        ("", .invalidName),
        ("/lfs1/../etc/passwd", .invalidName),
        ("/lfs1/dir/../../x", .invalidName),
        ("/lfs1/./a", .invalidName),
        ("/../lfs1/a", .invalidName),
        ("/lfs1/a\u{0}b", .invalidName),
        ("/etc/passwd", .noMountPoint),
        ("/", .noMountPoint),
        ("/lfs10/a", .noMountPoint),
        ("/LFS1/a", .noMountPoint),
    ]

    @Test("device paths resolve inside the root or are refused", arguments: paths)
    func resolve(path: String, expected: Expected) {
        let resolution = sandbox.resolve(path)
        switch expected {
        case .inside(let relative):
            let url =
                relative.isEmpty ? root.standardizedFileURL : root.standardizedFileURL.appendingPathComponent(relative)
            #expect(resolution == .inside(url))
            if case .inside(let resolved) = resolution {
                #expect(resolved.standardizedFileURL.path.hasPrefix(root.standardizedFileURL.path))
            }
        case .noMountPoint: #expect(resolution == .noMountPoint)
        case .invalidName: #expect(resolution == .invalidName)
        }
    }

    @Test("a symbolic link inside the root is never followed")
    func symlinksAreRefused() throws {
        let outside = root.deletingLastPathComponent().appendingPathComponent("outside")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try Data("secret".utf8).write(to: outside.appendingPathComponent("secret.txt"))
        try FileManager.default.createSymbolicLink(at: root.appendingPathComponent("link"), withDestinationURL: outside)
        try FileManager.default.createSymbolicLink(
            at: root.appendingPathComponent("file-link"),
            withDestinationURL: outside.appendingPathComponent("secret.txt")
        )
        #expect(sandbox.resolve("/lfs1/link/secret.txt") == .invalidName)
        #expect(sandbox.resolve("/lfs1/file-link") == .invalidName)
        #expect(sandbox.resolve("/lfs1/link") == .invalidName)
    }

    @Test("files are created, appended, read and sized; parents are not created")
    func fileOperations() throws {
        guard case .inside(let url) = sandbox.resolve("/lfs1/f.bin") else {
            Issue.record("did not resolve")
            return
        }
        #expect(sandbox.entry(at: url) == .missing)
        // The host folder comes with the first file, not with the sandbox.
        #expect(!FileManager.default.fileExists(atPath: root.path))
        #expect(sandbox.entry(at: root) == .directory)
        #expect(sandbox.create(url, truncate: false))
        #expect(sandbox.append(url, bytes: [1, 2, 3]))
        #expect(sandbox.append(url, bytes: [4]))
        #expect(sandbox.entry(at: url) == .file(size: 4))
        #expect(sandbox.read(url, offset: 1, count: 10) == [2, 3, 4])
        #expect(sandbox.create(url, truncate: true))
        #expect(sandbox.entry(at: url) == .file(size: 0))
        guard case .inside(let nested) = sandbox.resolve("/lfs1/missing/dir/f") else {
            Issue.record("did not resolve")
            return
        }
        #expect(!sandbox.create(nested, truncate: false))
        #expect(sandbox.entry(at: root) == .directory)
    }
}
