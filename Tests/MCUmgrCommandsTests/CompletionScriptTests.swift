import Foundation
import SMPTestSupport
import Testing

@testable import MCUmgrCommands

/// The completion scripts, driven in real shells: a line typed into an interactive bash or zsh
/// (in a pseudo-terminal, Tests/Shell/complete-in-shell.py) and TAB pressed, and fish's own
/// completion engine (`complete -C`) — with the global options before the command, as people type.
@Suite struct CompletionScriptTests {
    static let lines: [(line: String, completed: String)] = [
        ("mcumgr --conn udp://x image li", "mcumgr --conn udp://x image list"),
        ("mcumgr -c board os ec", "mcumgr -c board os echo"),
        ("mcumgr --timeout 5 --json image li", "mcumgr --timeout 5 --json image list"),
        ("mcumgr image li", "mcumgr image list"),
    ]

    /// The script `mcumgr --generate-completion-script SHELL` prints, in a file.
    static func script(_ shell: String) async throws -> URL {
        let result = await CLI.run(["--generate-completion-script", shell])
        #expect(result.status == 0, "\(result.stderr)")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("mcumgr-\(UUID().uuidString).\(shell)")
        try Data(result.stdout.utf8).write(to: file)
        return file
    }

    @Test func theBashScriptCompletesOnWholeWords() async throws {
        let file = try await Self.script("bash")
        defer { try? FileManager.default.removeItem(at: file) }
        let text = try String(contentsOf: file, encoding: .utf8)
        #expect(text.hasSuffix(CompletionScript.bashWrapper + "\n"))
        #expect(!text.contains("\n" + CompletionScript.bashRegistration))
    }

    @Test(Peers.needed("bash", "python3")) func bashCompletesAfterGlobalOptions() async throws {
        try await Self.typeInto("bash")
    }

    @Test(Peers.needed("zsh", "python3")) func zshCompletesAfterGlobalOptions() async throws {
        try await Self.typeInto("zsh")
    }

    /// Types each line into the shell and presses TAB.
    static func typeInto(_ shell: String) async throws {
        let file = try await script(shell)
        defer { try? FileManager.default.removeItem(at: file) }
        let driver = Peers.packageRoot.appendingPathComponent("Tests/Shell/complete-in-shell.py").path
        for (line, completed) in lines {
            let expected = completed.split(separator: " ").suffix(2).joined(separator: " ")
            let shown = try await Peers.run("python3", [driver, shell, file.path, line, expected])
            #expect(String(decoding: shown, as: UTF8.self).contains(completed), "\(shell): \(line)")
        }
    }

    /// `-c <TAB>` offers the saved profiles: the script asks the built `mcumgr` for them
    /// (`---completion`), in a real bash with the profiles in a folder of the test's own.
    @Test(Peers.needed("bash", "python3")) func bashCompletesProfileNames() async throws {
        let file = try await Self.script("bash")
        defer { try? FileManager.default.removeItem(at: file) }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mcumgr-cfg-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try ProfileStore(directory: folder).save(name: "board-under-test", url: "sim://", replacing: false)
        let binaries = URL(fileURLWithPath: try EntryTests.executable()).deletingLastPathComponent().path
        let path = binaries + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let driver = Peers.packageRoot.appendingPathComponent("Tests/Shell/complete-in-shell.py").path
        let shown = try await Peers.run(
            "/usr/bin/env",
            [
                "PATH=\(path)", "MCUMGR_CONFIG_DIR=\(folder.path)", "python3", driver, "bash", file.path,
                "mcumgr -c board-u", "board-under-test",
            ]
        )
        #expect(String(decoding: shown, as: UTF8.self).contains("mcumgr -c board-under-test"))
    }

    /// What the scripts' callback prints: the profile names, one per line, and for zsh the blank
    /// pseudo-completion its script removes. The built `mcumgr` runs in a process of its own with
    /// `SAP_SHELL` set as the scripts set it: swift-argument-parser keeps the requesting shell in a
    /// process-wide variable that any script generated in-process sets (and never clears), so in
    /// the test process the answer's format would depend on which test ran before.
    @Test(arguments: [("bash", "bench\nboard\n"), ("zsh", "bench\nboard\n \n")])
    func theCompletionCallbackListsProfiles(shell: String, expected: String) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mcumgr-cfg-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = ProfileStore(directory: folder)
        try store.save(name: "bench", url: "udp://127.0.0.1", replacing: false)
        try store.save(name: "board", url: "sim://", replacing: false)
        let output = try await Peers.run(
            "/usr/bin/env",
            [
                "MCUMGR_CONFIG_DIR=\(folder.path)", "SAP_SHELL=\(shell)", try EntryTests.executable(),
                "---completion", "--", "-c", "2", "1", "mcumgr", "-c", "b",
            ]
        )
        #expect(String(decoding: output, as: UTF8.self) == expected)
    }

    @Test(Peers.needed("fish"))
    func fishCompletesAfterGlobalOptions() async throws {
        let file = try await Self.script("fish")
        defer { try? FileManager.default.removeItem(at: file) }
        for (line, completed) in Self.lines {
            let output = try await Peers.run(
                "fish",
                ["--no-config", "-c", "source \(file.path); complete -C '\(line)'"]
            )
            let first = String(decoding: output, as: UTF8.self).split(separator: "\n").first ?? ""
            let word = first.split(separator: "\t").first.map(String.init) ?? ""
            #expect(completed.hasSuffix(" " + word), "fish: \(line) → \(first)")
        }
    }

}
