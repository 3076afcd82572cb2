import Foundation
import MCUmgr
import MCUmgrDFU
import SMPCore
import SMPSimulator
import SMPTestSupport
import SMPUDPTransport
import Testing

@testable import MCUmgrCommands

/// The exit-status table (`mcumgr --help`, README), each row run through the CLI: its status,
/// one line on stderr without internal names, and with `--json` one error object on stdout.
@Suite struct ExitStatusTests {
    /// One row of the table: a command line that must end with a given status.
    enum Case: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case success
        case deviceRefused
        case shellCommandReturnedNonZero
        case linkTimeout
        case nothingListens
        case upgradeOutcome
        case stateUnreachable
        case stateFileDamaged
        case usageMissingArgument
        case usageMistypedCommand
        case usageNegativeRetries
        case notAnImage
        case emptyFile
        case oversizeShellCommand
        case missingFile
        case folderGivenAsFile
        case missingKeyForTheSimulator

        var testDescription: String { rawValue }

        var status: Int32 {
            switch self {
            case .success: 0
            case .deviceRefused, .shellCommandReturnedNonZero: 1
            case .linkTimeout, .nothingListens: 2
            case .upgradeOutcome: 3
            case .stateUnreachable, .stateFileDamaged: 4
            case .usageMissingArgument, .usageMistypedCommand, .usageNegativeRetries: 64
            // The client refuses a request that does not fit the device before sending it: what
            // the user typed is too large for this device, so shortening it (not retrying) helps.
            case .notAnImage, .emptyFile, .oversizeShellCommand: 65
            case .missingFile, .folderGivenAsFile, .missingKeyForTheSimulator: 66
            }
        }

        var kind: String? {
            switch self {
            case .success: nil
            case .deviceRefused: "device_refused"
            case .shellCommandReturnedNonZero: "failed"
            case .linkTimeout, .nothingListens: "link"
            case .upgradeOutcome: "upgrade_outcome"
            case .stateUnreachable, .stateFileDamaged: "state"
            case .usageMissingArgument, .usageMistypedCommand, .usageNegativeRetries: "usage"
            case .notAnImage, .emptyFile, .oversizeShellCommand: "bad_input"
            case .missingFile, .folderGivenAsFile, .missingKeyForTheSimulator: "unreadable_input"
            }
        }

        /// What the one line on stderr must say.
        var fragment: String? {
            switch self {
            case .success: nil
            case .deviceRefused: "KEY_NOT_FOUND"
            case .shellCommandReturnedNonZero: "'kernel' returned 1 on the device"
            case .linkTimeout: "no answer"
            case .nothingListens: "nothing listens"
            case .upgradeOutcome: "upgrade failed while verifying"
            case .stateUnreachable: "cannot reach PostgreSQL at 127.0.0.1:"
            case .stateFileDamaged: "state.sqlite: not a usable rollout state file"
            case .usageMissingArgument: "Missing expected argument"
            case .usageMistypedCommand: "did you mean 'image'?"
            case .usageNegativeRetries: "--retries must be between 0 and 100"
            case .notAnImage: "not-an-image.bin starts with 68 65 6c 6c: not an MCUboot image"
            case .emptyFile: "empty.bin: empty file"
            case .oversizeShellCommand:
                "the shell command is too large for the device: the request takes 3023 bytes and the device "
                    + "accepts at most 2048 per request; shorten it"
            case .missingFile: "No such file or directory"
            case .folderGivenAsFile: "is a folder, not a file"
            case .missingKeyForTheSimulator: "cannot read"
            }
        }

        /// Runs the case, with `--json` or without.
        func run(json: Bool) async throws -> CLI.Result {
            let scratch = Scratch()
            let extra = json ? ["--json"] : []
            switch self {
            case .success: return await CLI.sim(arguments: ["os", "echo", "hi"] + extra)
            case .deviceRefused: return await CLI.sim(arguments: ["settings", "read", "app/missing"] + extra)
            case .shellCommandReturnedNonZero: return await CLI.sim(arguments: ["shell", "exec", "kernel"] + extra)
            case .linkTimeout:
                let silent = try SilentDevice()
                return await CLI.run(
                    ["--conn", silent.url, "--timeout", "1", "--retries", "0", "os", "echo", "hi"] + extra
                )
            case .nothingListens:
                return await CLI.run(["--conn", try closedUDPPort(), "--retries", "0", "os", "echo", "hi"] + extra)
            case .upgradeOutcome:
                // Downgrade prevention the device cannot report (Zephyr 3.4): MCUboot erases the
                // older image at the boot, and the verification finds it gone.
                let device = SimDevice(options: "mode=overwrite&version=2.0.0&no_downgrade=1")
                return await CLI.sim(arguments: ["upgrade", UpgradeCommandTests.example] + extra, device: device)
            case .stateUnreachable:
                let url = "postgres://postgres@127.0.0.1:\(try closedTCPPort())/mcumgr"
                return await CLI.run(["fleet", "status", "--state", url] + extra)
            case .stateFileDamaged:
                let file = try scratch.file("state.sqlite", Data(repeating: 0x5A, count: 4096))
                return await CLI.run(["fleet", "status", "--state", file] + extra)
            case .usageMissingArgument: return await CLI.sim(arguments: ["os", "echo"] + extra)
            case .usageMistypedCommand: return await CLI.sim(arguments: ["imag", "list"] + extra)
            case .usageNegativeRetries:
                return await CLI.sim(arguments: ["--retries", "-1", "os", "echo", "hi"] + extra)
            case .notAnImage:
                let file = try scratch.file("not-an-image.bin", Data("hello".utf8))
                return await CLI.sim(arguments: ["image", "upload", file] + extra)
            case .emptyFile:
                let file = try scratch.file("empty.bin", Data())
                return await CLI.run(["image", "info", file] + extra)
            case .oversizeShellCommand:
                // The simulated device's buffer over sim:// is 2048 bytes.
                return await CLI.sim(arguments: ["shell", "exec", "echo", String(repeating: "a", count: 3000)] + extra)
            case .missingFile: return await CLI.sim(arguments: ["image", "upload", scratch.missing("app.bin")] + extra)
            case .folderGivenAsFile: return await CLI.sim(arguments: ["image", "upload", scratch.folder.path] + extra)
            case .missingKeyForTheSimulator:
                return await CLI.run(
                    ["simulator", "--udp", "127.0.0.1:0", "--key", scratch.missing("key.pem")] + extra
                )
            }
        }
    }

    @Test(arguments: Case.allCases)
    func statusAndOneLineOnStderr(_ row: Case) async throws {
        let result = try await row.run(json: false)
        #expect(result.status == row.status, "\(result.stderr)")
        guard let fragment = row.fragment else {
            #expect(result.stderr == "")
            return
        }
        // An upgrade draws its progress on stderr; its error is still the one last line.
        let errorLines = CLI.lines(result.stderr).filter { $0.hasPrefix("error: ") }
        #expect(errorLines.count == 1, "\(result.stderr)")
        #expect(CLI.lines(result.stderr).last?.hasPrefix("error: ") == true, "\(result.stderr)")
        if row != .upgradeOutcome { CLI.expectOneErrorLine(result) }
        #expect(CLI.internalNames(in: result.stderr) == [], "\(result.stderr)")
        #expect(result.stderr.contains(fragment), "\(result.stderr)")
        #expect(!result.stdout.contains("\"error\""), "the error object is for --json only")
    }

    @Test(arguments: Case.allCases)
    func jsonErrorObject(_ row: Case) async throws {
        let result = try await row.run(json: true)
        #expect(result.status == row.status, "\(result.stderr)")
        guard let kind = row.kind else {
            #expect(result.stderr == "")
            #expect(!result.stdout.contains("\"error\""))
            return
        }
        CLI.expectOneErrorLine(result)
        let last = try #require(CLI.lines(result.stdout).last)
        let object = try CLI.json(last)
        #expect(object.keys.sorted() == ["error"])
        let error = try #require(object["error"] as? [String: Any])
        #expect(error.keys.sorted() == ["kind", "message", "status"])
        #expect(error["status"] as? Int == Int(row.status))
        #expect(error["kind"] as? String == kind)
        #expect("error: \(error["message"] as? String ?? "")\n" == result.stderr)
        // Nothing but JSON on stdout: every line parses.
        #expect(throws: Never.self) { try CLI.jsonLines(result.stdout) }
    }

    /// Ctrl-C cancels the command's task (MCUmgrCLI's `Interrupt`); an upload or upgrade then
    /// ends with 130 and one line saying how to resume, wherever the cancel caught it (here before
    /// anything was sent; EntryTests sends a real SIGINT mid-upload), and with `--json` the error
    /// object says the same.
    @Test(arguments: [["image", "upload"], ["upgrade"]], [false, true])
    func anInterruptedTransferSaysHowToResume(_ verb: [String], _ json: Bool) async throws {
        let example = Peers.packageRoot.appendingPathComponent("Examples/hello-1.1.0.bin").path
        let extra = json ? ["--json"] : []
        let task = Task { await CLI.run(["--conn", "sim://?latency_ms=20"] + verb + [example] + extra) }
        task.cancel()
        let result = await task.value
        #expect(result.status == 130, "\(result.stdout)\n\(result.stderr)")
        let lines = CLI.lines(result.stderr).filter { $0.hasPrefix("error:") }
        #expect(lines.count == 1)
        #expect(lines.first?.hasPrefix("error: interrupted") == true, "\(result.stderr)")
        #expect(lines.first?.hasSuffix("; run the same command again to resume") == true, "\(result.stderr)")
        #expect(CLI.internalNames(in: result.stderr) == [], "\(result.stderr)")
        guard json else { return }
        let last = try #require(CLI.lines(result.stdout).last)
        let error = try #require(try CLI.json(last)["error"] as? [String: Any])
        #expect(error["status"] as? Int == 130)
        #expect(error["kind"] as? String == "interrupted")
        #expect(lines.first == "error: \(error["message"] as? String ?? "")")
    }

    /// Every kind the error object can carry is the status the table gives it.

    @Test func kindsAndStatusesAgree() {
        for (kind, status) in FailureReport.kinds {
            #expect(FailureReport(status: status, kind: kind, message: "x").status.rawValue == status.rawValue)
        }
        #expect(Set(FailureReport.kinds.map(\.status)) == Set(ExitStatus.allCases).subtracting([.success]))
    }

    /// Errors that no command line above reaches in a test: cancellation, a request over the
    /// 16-bit length (made by the frame encoder itself), a library message on several lines.
    @Test func errorsWithoutACommandLine() {
        #expect(FailureReport(CancellationError()).status == .interrupted)
        let encoding = FailureReport(
            Self.thrown { _ = try SMPFrame(header: Self.header, payload: [UInt8](repeating: 0, count: 70000)) }
        )
        #expect(encoding.status == .badInput)
        #expect(
            encoding.message
                == "the request is too large for the device: it takes 70000 bytes; send less (a shorter value, name or command)"
        )
        let lines = FailureReport(CommandFailure("first\nsecond\n"))
        #expect(lines.message == "first; second")
        #expect(lines.status == .failed)
    }

    /// A header for frames built only to fail.
    static let header = SMPHeader(operation: .write, length: 0, group: .os, sequence: 0, command: 0)

    /// The error a call throws (a test of errors made by the code that makes them).
    static func thrown(_ body: () throws -> Void) -> any Error {
        do {
            try body()
        } catch {
            return error
        }
        return CommandFailure("nothing was thrown")
    }

    /// The error an async call throws.
    static func thrownAsync(_ body: () async throws -> Void) async -> any Error {
        do {
            try await body()
        } catch {
            return error
        }
        return CommandFailure("nothing was thrown")
    }

    /// A request too large for the link or the device: the sizes come from the fields of the
    /// error that each layer throws — never read back out of its message, which names internal
    /// request types ("shell command 0 needs 3018 bytes") — and what reaches people is the sizes
    /// and what to do.
    @Test func requestTooLargeTakesTheSizesFromTheErrorsFields() async throws {
        let device = SimulatedDevice(configuration: .init(bufferSize: 2048))
        let oversize = [UInt8](repeating: 0x0a, count: 3000)
        let loopback = try await LoopbackTransport(device: device).connect()
        let udp = try await UDPTransport(host: "127.0.0.1", port: 9).connect()
        let client = try await SMPClient.connect(LoopbackTransport(device: device))
        let echo = OSManagement.Echo(text: String(repeating: "x", count: 3000))
        let echoSize = try SMPFrame.request(echo, sequence: 0).bytes.count
        let cases: [(any Error, size: Int?, limit: Int?)] = [
            (await Self.thrownAsync { try await loopback.send(oversize) }, 3000, 2048),
            (await Self.thrownAsync { try await udp.send(oversize) }, 3000, 1472),
            (await Self.thrownAsync { _ = try await client.send(echo) }, echoSize, 2048),
            (Self.thrown { _ = try SerialFraming.encode([UInt8](repeating: 0, count: 70000)) }, 70000, nil),
            (
                Self.thrown { _ = try SMPFrame(header: Self.header, payload: [UInt8](repeating: 0, count: 70000)) },
                70000, nil
            ),
        ]
        for (error, size, limit) in cases {
            let tooLarge: RequestTooLarge
            switch error {
            case let error as SMPTransportError: tooLarge = RequestTooLarge(error)
            case let error as SMPError: tooLarge = RequestTooLarge(error)
            default:
                Issue.record("not a frame-too-large error: \(error)")
                continue
            }
            #expect(tooLarge.size == size, "\(error)")
            #expect(tooLarge.limit == limit, "\(error)")
            #expect(CLI.internalNames(in: tooLarge.description) == [])
            #expect(FailureReport(error).message == tooLarge.description)
        }
        await client.close()
        await loopback.close()
        await udp.close()
    }
}
