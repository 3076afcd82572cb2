import Foundation
import MCUboot
import MCUmgr
import SMPCBOR
import SMPCore
import SMPTestSupport
import Testing

@testable import SMPSimulator

/// A minimal client for tests: sends typed requests to a device through ``LoopbackTransport``
/// and decodes the answers with SMPCore, so every handler test goes through the real framing.
struct TestClient {
    let device: SimulatedDevice
    let connection: any SMPConnection
    var sequence: UInt8 = 0
    let collector: FrameCollector

    init(_ device: SimulatedDevice) async throws {
        self.device = device
        connection = try await LoopbackTransport(device: device).connect()
        collector = FrameCollector(connection.frames)
    }

    init(configuration: SimulatedDevice.Configuration = .init()) async throws {
        try await self.init(SimulatedDevice(configuration: configuration))
    }

    /// Sends raw bytes and returns the next frame, or `nil` when the device stays silent.
    ///
    /// The default wait is long because an answer is expected: a loaded CI machine can delay a
    /// task by hundreds of milliseconds, and a found answer returns at once. Tests that expect
    /// silence pass a short `timeout`.
    mutating func raw(_ bytes: [UInt8], timeout: Duration = .seconds(10)) async throws -> SMPFrame? {
        try await connection.send(bytes)
        return try await nextFrame(timeout: timeout)
    }

    /// The next frame received within `timeout`, or `nil`.
    func nextFrame(timeout: Duration = .seconds(10)) async throws -> SMPFrame? {
        guard let bytes = await collector.next(timeout: timeout) else { return nil }
        return try SMPFrame(parsing: bytes)
    }

    /// Sends a typed request; returns the response frame.
    mutating func frame<R: SMPRequest>(_ request: R, version: SMPVersion = .v2) async throws -> SMPFrame {
        let frame = try SMPFrame.request(request, sequence: sequence, version: version)
        sequence &+= 1
        let response = try #require(try await raw(frame.bytes), "no response to \(R.self)")
        #expect(response.header.sequence == frame.header.sequence)
        #expect(response.header.group == R.group)
        #expect(response.header.command == R.command)
        return response
    }

    /// Sends a typed request and decodes the success response (throws the device's refusal).
    mutating func send<R: SMPRequest>(_ request: R, version: SMPVersion = .v2) async throws -> R.Response {
        try await frame(request, version: version).decodeResponse(to: R.self)
    }

    /// Sends a typed request and returns the payload as CBOR.
    mutating func payload<R: SMPRequest>(_ request: R, version: SMPVersion = .v2) async throws -> CBOR {
        try await frame(request, version: version).payloadValue()
    }

    /// Sends a typed request and returns the answer's payload as hex, for checks byte for byte of
    /// what the device writes (key order, indefinite-length maps).
    mutating func answerHex<R: SMPRequest>(_ request: R, version: SMPVersion = .v2) async throws -> String {
        TestBytes.hex(Array(try await frame(request, version: version).bytes.dropFirst(SMPHeader.size)))
    }

    /// Sends a request built from a CBOR map (for malformed or hand-shaped requests).
    mutating func payload(
        group: SMPGroup,
        command: UInt8,
        operation: SMPOperation,
        _ map: CBOR,
        version: SMPVersion = .v2
    ) async throws -> CBOR {
        let header = SMPHeader(
            version: version,
            operation: operation,
            length: 0,
            group: group,
            sequence: sequence,
            command: command
        )
        sequence &+= 1
        let frame = try SMPFrame(header: header, payload: CBORWriter.encode(map))
        let response = try #require(try await raw(frame.bytes), "no response")
        return try response.payloadValue()
    }

    /// Uploads an image in chunks, always continuing from the offset the device returns.
    mutating func upload(_ image: [UInt8], image number: UInt32? = nil, chunk: Int = 512) async throws -> Bool? {
        let sha = Data(ImageHashAlgorithm.sha256.hash(image))
        var offset = 0
        var match: Bool?
        var rounds = 0
        while offset < image.count {
            rounds += 1
            try #require(rounds < 10_000, "upload does not progress")
            let end = min(offset + chunk, image.count)
            let data = Data(image[offset..<end])
            let request =
                offset == 0
                ? ImageManagement.Upload(offset: 0, data: data, length: UInt64(image.count), sha256: sha, image: number)
                : ImageManagement.Upload(offset: UInt64(offset), data: data)
            let response = try await send(request)
            offset = Int(response.offset)
            match = response.match
        }
        return match
    }
}

/// Test images built in Swift (no imgtool needed for unit tests).
enum TestImages {
    /// A valid unsigned image of a version.
    static func image(_ version: String, image: Int = 0) -> [UInt8] {
        FactoryImage.make(version: ImageVersion(version)!, image: image + 100)
    }

    /// The TLV hash of an image.
    static func hash(_ bytes: [UInt8]) -> Data {
        Data((try? MCUbootImage(bytes: bytes))?.hash ?? [])
    }

    /// An image whose payload was changed after hashing.
    static func corrupted(_ version: String) -> [UInt8] {
        var bytes = image(version)
        bytes[0x200 + 10] ^= 0xff
        return bytes
    }
}

/// Error helpers.
func deviceError(_ body: () async throws -> Void) async -> SMPDeviceError? {
    do {
        try await body()
        return nil
    } catch let error as SMPDeviceError {
        return error
    } catch {
        Issue.record("unexpected error \(error)")
        return nil
    }
}

/// Runs a peer tool with a deadline: a hung client fails the test instead of hanging it.
enum BoundedProcess {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
        var timedOut: Bool
        var summary: String {
            "exit \(status)\(timedOut ? " (killed after timeout)" : "")\nstdout: \(stdout)\nstderr: \(stderr)"
        }
    }

    static func run(
        _ executable: String,
        _ arguments: [String],
        timeout: Duration = .seconds(60),
        directory: URL? = nil
    )
        async throws -> Result
    {
        // Through the peers' runner: started from its own thread with an unblocked signal mask
        // (so the timeout's SIGTERM is obeyed), awaited without polling, one per core.
        do {
            let run = try await Peers.runProcess(
                executable,
                arguments,
                stdin: nil,
                timeout: timeout,
                directory: directory,
                environment: ["COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb"]
            )
            return Result(
                status: run.status,
                stdout: String(decoding: run.stdout, as: UTF8.self),
                stderr: String(decoding: run.stderr, as: UTF8.self),
                timedOut: false
            )
        } catch let failure as PeerError where failure.message.contains(" hung: killed after ") {
            // A hung client is a result to report (with its stderr), not an error of the test.
            return Result(status: -1, stdout: "", stderr: failure.message, timedOut: true)
        }
    }
}

/// Signed images made with the real `imgtool`, in a temporary folder.
struct ImgtoolImages {
    let folder: URL
    let key: URL

    init() async throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("sim-img-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        key = folder.appendingPathComponent("key.pem")
        let imgtool = try #require(Peers.path(of: "imgtool"), "imgtool is not installed")
        let result = try await BoundedProcess.run(
            imgtool,
            ["keygen", "-k", key.path, "-t", "ecdsa-p256"],
            timeout: .seconds(60)
        )
        try #require(result.status == 0, "imgtool keygen: \(result.summary)")
    }

    /// `imgtool create --align 4 --version V --header-size 0x200 --slot-size 0x40000 --pad-header --key key.pem`.
    func make(version: String, size: Int = 6_000, seed: UInt8 = 1) async throws -> URL {
        let app = folder.appendingPathComponent("app-\(version)-\(seed).bin")
        let payload = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ Int(seed)) }
        try Data(payload).write(to: app)
        let out = folder.appendingPathComponent("signed-\(version)-\(seed).bin")
        let imgtool = try #require(Peers.path(of: "imgtool"))
        let result = try await BoundedProcess.run(
            imgtool,
            [
                "create", "--align", "4", "--version", version, "--header-size", "0x200", "--slot-size", "0x40000",
                "--pad-header", "--key", key.path, app.path, out.path,
            ],
            timeout: .seconds(60)
        )
        try #require(result.status == 0, "imgtool create: \(result.summary)")
        return out
    }

    func remove() { try? FileManager.default.removeItem(at: folder) }
}

/// The reference's pipelining measurement (`zephyr-observed.md`): open an upload with a 512-byte
/// first chunk and wait for its answer, then send N chunks of 1400 data bytes without waiting.
/// On a device with four buffers: three are answered normally; with four the first is answered
/// `{"rc": 2}` (ENOMEM) and the rest with the stale offset 512; a fifth gets no answer at all.
enum BurstShape {
    /// A device slow enough (100 ms a request) that every burst is in its buffers before the
    /// first request is worked on, as on the observed server; four buffers of 2048 bytes.
    static var configuration: SimulatedDevice.Configuration {
        .init(bufferSize: 2048, bufferCount: 4, requestProcessingTime: .milliseconds(100))
    }

    /// An image long enough for the opening chunk and five more.
    static let image = FactoryImage.make(version: ImageVersion(major: 2, minor: 0, revision: 0), payloadSize: 10_000)

    /// The session-opening chunk (sequence 0).
    static func opening() throws -> [UInt8] {
        let sha = Data(ImageHashAlgorithm.sha256.hash(image))
        let request = ImageManagement.Upload(
            offset: 0,
            data: Data(image.prefix(512)),
            length: UInt64(image.count),
            sha256: sha
        )
        return try SMPFrame.request(request, sequence: 0).bytes
    }

    /// Chunk `index` of the burst (sequence `index + 1`) at offset 512 + 1400 × index.
    static func chunk(_ index: Int) throws -> [UInt8] {
        let start = 512 + 1400 * index
        let request = ImageManagement.Upload(offset: UInt64(start), data: Data(image[start..<start + 1400]))
        return try SMPFrame.request(request, sequence: UInt8(index + 1)).bytes
    }

    /// What the answers to a burst of `count` must be, by sequence number: the payload map, or
    /// `nil` for no answer.
    static func expected(_ count: Int) -> [UInt8: CBOR?] {
        var answers: [UInt8: CBOR?] = [:]
        if count <= 3 {
            for index in 0..<count { answers[UInt8(index + 1)] = ["off": CBOR(512 + 1400 * (index + 1))] }
            return answers
        }
        answers[1] = ["rc": 2]
        for index in 1..<4 { answers[UInt8(index + 1)] = ["off": 512] }
        for index in 4..<count { answers[UInt8(index + 1)] = .some(nil) }
        return answers
    }

    /// Checks received answers (payloads by sequence) against the reference.
    static func check(_ received: [UInt8: CBOR], burst count: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        for (sequence, expectation) in expected(count).sorted(by: { $0.key < $1.key }) {
            if let payload = expectation {
                #expect(received[sequence] == payload, "chunk \(sequence) of \(count)", sourceLocation: sourceLocation)
            } else {
                #expect(received[sequence] == nil, "chunk \(sequence) of \(count)", sourceLocation: sourceLocation)
            }
        }
        #expect(Set(received.keys).isSubset(of: Set(expected(count).keys)), sourceLocation: sourceLocation)
    }
}

/// An answer the device must write byte for byte: a request sent to a fresh device (after an
/// optional set-up), and the payload expected, as hex pieces commented with what they say.
struct AnswerCase: Sendable, CustomTestStringConvertible {
    typealias Step = @Sendable (inout TestClient) async throws -> Void

    let name: String
    let configuration: SimulatedDevice.Configuration
    let exchange: @Sendable (inout TestClient) async throws -> String
    let expected: [String]

    var testDescription: String { name }

    /// - Parameters:
    ///   - name: what the case shows.
    ///   - configuration: the device.
    ///   - before: requests whose answers are not checked.
    ///   - request: the request whose answer is checked.
    ///   - expected: the answer's payload in hex pieces.
    init<R: SMPRequest>(
        _ name: String,
        on configuration: SimulatedDevice.Configuration = .init(),
        before: Step? = nil,
        _ request: R,
        _ expected: [String]
    ) {
        self.name = name
        self.configuration = configuration
        self.expected = expected
        exchange = { client in
            try await before?(&client)
            return try await client.answerHex(request)
        }
    }

    /// Sends the request to a fresh device and compares the answer with the expected bytes.
    func check() async throws {
        var client = try await TestClient(configuration: configuration)
        let answer = try await exchange(&client)
        let expectedAnswer = expected.joined()
        #expect(answer == expectedAnswer, "\(name)")
    }
}
