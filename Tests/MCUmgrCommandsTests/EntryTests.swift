import Foundation
import MCUboot
import SMPBytes
import SMPSimulator
import SMPTestSupport
import Testing

@testable import MCUmgrCommands

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The `mcumgr` executable itself (MCUmgrCLI's `Entry` and `Interrupt`), run as a child process
/// the way a person runs it, against `mcumgr simulator` in another child process: Ctrl-C is a
/// real SIGINT here, not a cancelled task.
@Suite struct EntryTests {
    /// The built `mcumgr`, next to the test bundle (`swift build --build-tests` builds both).
    static func executable() throws -> String {
        #if os(Linux)
            let products = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        #else
            let bundle = Bundle.allBundles.first { $0.bundlePath.hasSuffix(".xctest") } ?? Bundle.main
            let products = bundle.bundleURL.deletingLastPathComponent()
        #endif
        let path = products.appendingPathComponent("mcumgr").path
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw PeerError(message: "no built mcumgr at \(path): run swift build --build-tests")
        }
        return path
    }

    /// The number of KiB a size for people starts with (`74.0 KiB`), 0 when there is none.
    static func kibibytes(_ text: some StringProtocol) -> Double {
        Double(text.prefix { $0.isNumber || $0 == "." }) ?? 0
    }

    /// Bounds on every wait: far above a real run, so only a hang reaches them.
    static let processBound: Duration = .seconds(600)
    static let outputBound: Duration = .seconds(20)

    /// SIGINT mid-upload: status 130 and, as the last line on stderr, how far it got and what to
    /// do; the same command again is answered at the first chunk with the device's offset
    /// (the device kept the interrupted upload), continues from there and completes. The
    /// simulator itself ends on SIGINT with status 0.
    @Test func sigintDuringAnUploadThenTheSameCommandResumes() async throws {
        let mcumgr = try Self.executable()
        let scratch = Scratch()
        // 160 KiB at one chunk in flight and 100 ms a chunk: over ten seconds of upload, so the
        // interrupt lands mid-transfer even on a loaded machine (at 20 ms a chunk a run beside the
        // rest of the suite finished the upload before the test saw 10% and sent SIGINT).
        let image = try BLEBenchmark.syntheticImage(size: 160 * 1024)
        let file = try scratch.file("big.bin", image)
        let simulator = RunningProcess(
            mcumgr,
            ["simulator", "--udp", "127.0.0.1:0", "--latency-ms", "100"],
            timeout: Self.processBound
        )
        defer { simulator.stop() }
        let announced = try await simulator.waitForOutput(timeout: Self.outputBound) { out, _ in out.hasSuffix("\n") }
        try #require(announced, "the simulator printed no endpoint: \(simulator.output.stderr)")
        let endpoint = simulator.output.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        try #require(endpoint.hasPrefix("udp://127.0.0.1:"), "\(endpoint)")
        let upload = ["--conn", endpoint, "image", "upload", file, "--window", "1"]

        let first = RunningProcess(mcumgr, upload, timeout: Self.processBound)
        defer { first.stop() }
        // Stderr is a pipe: progress comes as a line at every tenth; wait for the first tenth.
        let progressing = try await first.waitForOutput(timeout: Self.outputBound) { _, err in
            CLI.percentages(in: err).contains { $0 >= 10 }
        }
        try #require(progressing, "no progress: \(first.output.stderr)")
        first.send(SIGINT)
        let interrupted = try await first.finished()
        #expect(interrupted.status == 130, "\(interrupted.stderr)")
        let lines = CLI.lines(interrupted.stderr)
        let last = try #require(lines.last)
        let percent = try #require(CLI.percentages(in: last).first, "\(interrupted.stderr)")
        #expect(last == "error: interrupted at \(percent)%; run the same command again to resume")
        #expect((10...99).contains(percent), "\(interrupted.stderr)")
        #expect(lines.dropLast().allSatisfy { $0.hasPrefix("upload  ") }, "\(interrupted.stderr)")
        #expect(!interrupted.stdout.contains("uploaded"), "\(interrupted.stdout)")

        let second = RunningProcess(mcumgr, upload, timeout: Self.processBound)
        defer { second.stop() }
        let resumed = try await second.finished()
        #expect(resumed.status == 0, "\(resumed.stderr)")
        let resumeNote = try #require(
            CLI.lines(resumed.stderr).first { $0.hasPrefix("upload  the device continues an interrupted upload at ") },
            "\(resumed.stderr)"
        )
        // The first progress after the note is where the device stood: at least what it had
        // confirmed when interrupted.
        let progress = CLI.lines(resumed.stderr).filter { $0.hasPrefix("upload  ") && $0 != resumeNote }
        let resumedAt = try #require(progress.first.flatMap { CLI.percentages(in: $0).first })
        #expect(resumedAt >= percent, "\(resumed.stderr)")
        // The result says where it resumed and counts only what this run sent.
        let offset = String(resumeNote.dropFirst("upload  the device continues an interrupted upload at ".count))
        let done = try #require(CLI.lines(resumed.stdout).first { $0.hasPrefix("uploaded ") }, "\(resumed.stdout)")
        let prefix = "uploaded \(TransferProgressView.bytes(image.count)), resumed at \(offset): "
        #expect(done.hasPrefix(prefix), "\(done)")
        let sent = try #require(done.dropFirst(prefix.count).split(separator: " in ").first.map(String.init))
        #expect(
            abs(Self.kibibytes(sent) + Self.kibibytes(offset) - Self.kibibytes(prefix.dropFirst(9))) < 0.2,
            "\(done)"
        )
        let list = await CLI.run(["image", "list", "--json", "--conn", endpoint])
        let hash = try #require(try MCUbootImage(bytes: Array(image)).hash)
        #expect(list.stdout.contains(Hex.encode(hash)), "\(list.stdout)")

        simulator.send(SIGINT)
        let served = try await simulator.finished()
        #expect(served.status == 0, "\(served.stderr)")
        #expect(served.stderr == "")
    }
}
