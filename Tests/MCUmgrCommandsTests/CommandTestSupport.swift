import Foundation
import SMPBytes
import SMPPOSIX
import SMPTestSupport
import Testing

@testable import MCUmgrCommands

/// Runs `mcumgr` in-process against the simulated device and captures what it prints.
enum CLI {
    typealias Result = (status: Int32, stdout: String, stderr: String)

    /// Runs a command line as typed after `mcumgr`. The captured sinks are not terminals, so
    /// progress comes as plain lines. A few at a time (``CPUBound``): parsing a command line is
    /// CPU-heavy in a debug build, and hundreds at once stalled the rest of the suite.
    static func run(_ arguments: [String], stdin: Data = Data()) async -> Result {
        await CPUBound.run { await MCUmgrCommand.run(arguments: arguments, stdin: stdin) }
    }

    /// Words that must never reach a user's stderr: Foundation's error dumps and our own type
    /// names (a message built with `"\(R.self)"` or `"\(error)"` of a type without a description).
    static let internalNames = [
        "NSCocoaErrorDomain", "NSPOSIXErrorDomain", "UserInfo", "Error Domain", "SMPTransportError",
        "SMPTransferError", "SMPDeviceError", "SMPError", "FirmwareUpgradeError", "InputFileError", "MCUbootError",
        "ValidationError", "CBORError", "Execute", "Upload", "Request", "Response", "Optional(", "CodingKeys",
        "MCUmgrCommands.", "ArgumentParser.",
    ]

    /// The internal names a text contains (none, for anything a user reads).
    static func internalNames(in text: String) -> [String] {
        internalNames.filter { text.contains($0) }
    }

    /// Checks that a failed command said so in exactly one line on stderr, `error: …`, without
    /// internal names.
    static func expectOneErrorLine(
        _ result: Result,
        _ comment: Comment? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let lines = lines(result.stderr)
        #expect(lines.count == 1, "\(result.stderr)", sourceLocation: sourceLocation)
        #expect(lines.first?.hasPrefix("error: ") == true, "\(result.stderr)", sourceLocation: sourceLocation)
        #expect(internalNames(in: result.stderr) == [], "\(result.stderr)", sourceLocation: sourceLocation)
    }

    /// Runs a command against a fresh simulated device (`--conn sim://…` appended).
    static func sim(_ arguments: String..., device: SimDevice? = nil) async -> Result {
        await run(arguments + ["--conn", device?.url ?? "sim://"])
    }

    /// Runs a command with arguments given as an array against a simulated device.
    static func sim(arguments: [String], device: SimDevice? = nil) async -> Result {
        await run(arguments + ["--conn", device?.url ?? "sim://"])
    }

    /// Whether a command line is one of the commands that take no client options (`decode`,
    /// `conn`, `image info`, `simulator`, `bench`), so a test must not give it `--conn`.
    static func worksWithoutADevice(_ arguments: [String]) -> Bool {
        ["decode", "conn", "simulator", "bench"].contains(arguments.first ?? "")
            || arguments.starts(with: ["image", "info"])
    }

    /// The lines of a command's stdout.
    static func lines(_ text: String) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    /// Parses one JSON document.
    static func json(_ text: String) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(text.utf8))
        return try #require(object as? [String: Any])
    }

    /// Parses one JSON object per line.
    static func jsonLines(_ text: String) throws -> [[String: Any]] {
        try lines(text).map { try json($0) }
    }

    /// An MCUboot test fixture (see Tests/MCUbootTests/Fixtures/make-fixtures.sh).
    static func fixture(_ name: String) -> String {
        Peers.packageRoot.appendingPathComponent("Tests/MCUbootTests/Fixtures/\(name)").path
    }
}

/// A simulated device whose flash, settings and files live in a temporary folder, so that
/// several commands talk to the same device (`sim://?state_dir=…`).
final class SimDevice: Sendable {
    let folder: URL
    let options: String

    init(options: String = "") {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("mcumgr-cli-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        self.options = options
    }

    var url: String { "sim://?state_dir=\(folder.path)" + (options.isEmpty ? "" : "&" + options) }

    /// Seeds the device's saved settings (the simulator's `settings.json`: name → base64 value);
    /// every command boots the device again, which loads them.
    func saveSettings(_ values: [String: Data]) throws {
        try JSONEncoder().encode(values).write(to: folder.appendingPathComponent("settings.json"))
    }

    /// A scratch file path inside the device's folder (outside its file system).
    func scratch(_ name: String) -> String { folder.appendingPathComponent("scratch-" + name).path }

    deinit { try? FileManager.default.removeItem(at: folder) }
}

/// A UDP port where something listens and never answers: a dead device. It counts the
/// datagrams that reached it.
final class SilentDevice: @unchecked Sendable {
    // The socket is only read by `datagrams()`, after the command ended.
    private let socket: UDPSocket

    init() throws {
        socket = try UDPSocket(bindingTo: "127.0.0.1", port: 0)
    }

    var url: String { "udp://127.0.0.1:\(socket.localAddress.port)" }

    /// The datagrams that arrived (drained, waiting 10 ms for each).
    func datagrams() throws -> Int {
        var count = 0
        while try socket.receive(timeout: .milliseconds(10)) != nil { count += 1 }
        return count
    }

    deinit { socket.close() }
}

/// The ports the tests take for "nothing listens here": below every system's ephemeral range
/// (Linux 32768–60999, macOS 49152–65535), so that no socket bound to port 0 — every simulator,
/// server and client of the suite — can take one between the check and the test's use. A port
/// found by binding to 0 and closing was once given next to a 200-device simulator of another test,
/// and the upgrade meant to be refused went to that device. No test binds these ports itself.
private let closedPortCandidates: ClosedRange<UInt16> = 20_000...20_999

/// A UDP port where nothing listens: the host answers ICMP port unreachable.
func closedUDPPort() throws -> String {
    for port in closedPortCandidates {
        guard let socket = try? UDPSocket(bindingTo: "127.0.0.1", port: port) else { continue }
        socket.close()
        return "udp://127.0.0.1:\(port)"
    }
    throw POSIXError(.EADDRINUSE)
}

/// A TCP port on 127.0.0.1 where nothing listens: a connection is refused.
func closedTCPPort() throws -> Int {
    for port in closedPortCandidates where canBindTCP(port) { return Int(port) }
    throw POSIXError(.EADDRINUSE)
}

/// Whether a TCP socket can be bound to the port on 127.0.0.1 (bound, never listening, closed).
private func canBindTCP(_ port: UInt16) -> Bool {
    #if canImport(Darwin)
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
    #else
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #endif
    guard descriptor >= 0 else { return false }
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = port.bigEndian
    return withUnsafePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
        }
    }
}

/// A temporary folder for local input files (images, keys, folders given as files), removed
/// when released.
final class Scratch: Sendable {
    let folder: URL

    init() {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("mcumgr-scratch-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    /// Writes a file and returns its path.
    func file(_ name: String, _ contents: Data) throws -> String {
        let url = folder.appendingPathComponent(name)
        try contents.write(to: url)
        return url.path
    }

    /// A path inside the folder where nothing is.
    func missing(_ name: String) -> String { folder.appendingPathComponent(name).path }

    deinit { try? FileManager.default.removeItem(at: folder) }
}

/// Standard error on a terminal, as a person sees it: what a command wrote (bars redrawn with
/// `\r`, erased with `ESC [K`, lines) rendered into screen lines.
final class Terminal: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var raw = ""
    private var watcher: (@Sendable (String) -> Void)?

    /// A sink that writes here, as the real standard error does on a terminal.
    var sink: Console.Sink { Console.Sink.barAware(isTerminal: true) { [self] in append($0) } }

    /// Calls `body` with everything written so far, after each write.
    func watch(_ body: @escaping @Sendable (String) -> Void) { lock.withLock { watcher = body } }

    private func append(_ text: String) {
        let (all, watcher) = lock.withLock {
            raw += text
            return (raw, self.watcher)
        }
        watcher?(all)
    }

    /// Everything written, escapes included.
    var written: String { lock.withLock { raw } }

    /// The screen's lines: `\r` moves to the start of the line, `ESC [K` erases to its end, `\n`
    /// ends it; other text overwrites from the cursor. An unfinished last line is included.
    var screen: [String] {
        var lines: [String] = []
        var line: [Character] = []
        var cursor = 0
        var rest = Substring(written)
        while let character = rest.first {
            if rest.hasPrefix("\u{1B}[K") {
                line.removeSubrange(min(cursor, line.count)...)
                rest = rest.dropFirst(3)
                continue
            }
            rest = rest.dropFirst()
            switch character {
            case "\r": cursor = 0
            case "\n":
                lines.append(String(line))
                line = []
                cursor = 0
            default:
                if cursor < line.count { line[cursor] = character } else { line.append(character) }
                cursor += 1
            }
        }
        return line.isEmpty ? lines : lines + [String(line)]
    }
}

extension CLI {
    /// Runs a command line with stderr on a ``Terminal`` and cancels its task, as the first
    /// Ctrl-C does (MCUmgrCLI's `Interrupt`), once `interruptWhen` holds for what the terminal
    /// shows so far.
    /// - Returns: the exit status, stdout and the terminal.
    static func interrupt(
        _ arguments: [String],
        when interruptWhen: @escaping @Sendable (String) -> Bool
    ) async -> (status: Int32, stdout: String, terminal: Terminal) {
        let terminal = Terminal()
        let out = Lines()
        let command = Task {
            await Console.$error.withValue(terminal.sink) {
                await Console.$output.withValue(Console.Sink(write: out.append)) {
                    await MCUmgrCommand.main(arguments: arguments)
                }
            }
        }
        terminal.watch { if interruptWhen($0) { command.cancel() } }
        let status = await command.value
        return (status, out.text, terminal)
    }

    /// Runs a command line with stderr on a ``Terminal``, as a person at a terminal sees it.
    /// - Returns: the exit status, stdout and the terminal.
    static func runOnTerminal(_ arguments: [String]) async -> (status: Int32, stdout: String, terminal: Terminal) {
        let terminal = Terminal()
        let out = Lines()
        let status = await Console.$error.withValue(terminal.sink) {
            await Console.$output.withValue(Console.Sink(write: out.append)) {
                await MCUmgrCommand.main(arguments: arguments)
            }
        }
        return (status, out.text, terminal)
    }

    /// The percentages a progress bar or line showed, in order.
    static func percentages(in text: String) -> [Int] {
        text.matches(of: /(\d+)%/).compactMap { Int($0.1) }
    }
}

/// Lines written by a sink, collected across tasks.
final class Lines: Sendable {
    private let lines = Locked<[String]>([])

    func append(_ line: String) { lines.withLock { $0.append(line) } }

    var text: String { lines.withLock { $0.map { $0 + "\n" }.joined() } }
}
