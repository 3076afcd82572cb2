import Foundation
import SMPCBOR
import SMPCore
import SMPTestSupport
import Testing

/// Replays `Fixtures/golden-frames.jsonl` (made by `scripts/generate-golden-frames.py` with the
/// PyPI `smp` 4.2.0 package and cbor2) through our typed messages.
///
/// Each line is decoded with the type its `name` names, re-encoded canonically, and compared with
/// the original: bytes when `smp` made the line, decoded maps (order-insensitive) when the script
/// built it with cbor2, or the line's `expect_hex` where our encoding deliberately differs.
struct GoldenFramesTests {
    @Test func theFileLoadsAndHasLines() throws {
        #expect(try GoldenFrames.load().count >= 100)
    }

    @Test(arguments: GoldenFrames.lines)
    func frameRoundTripsThroughItsType(_ line: GoldenFrames.Line) throws {
        let frame = try SMPFrame(parsing: TestBytes.hex(line.hex))
        if line.kind == "error" {
            let payload = try frame.payloadValue()
            let error = try #require(throws: SMPDeviceError.self) {
                try SMPResponseStatus.check(payload, group: frame.header.group, command: frame.header.command)
            }
            #expect(error.codeName == line.codeName)
            #expect(try SMPFrame.response(payload: payload, to: requestHeader(of: frame)).bytes == frame.bytes)
            return
        }
        let codec = try #require(GoldenFrames.codecs[line.name], "no Swift type for \(line.name)")
        #expect(codec.kind == line.kind)
        if let expectError = line.expectError {
            let error = try #require(throws: SMPError.self, "\(line.note)") { try codec.reencode(frame) }
            #expect(error.code.description == expectError)
            return
        }
        let ours = try codec.reencode(frame)
        if let expectHex = line.expectHex {
            #expect(TestBytes.hex(ours) == expectHex, "\(line.note)")
        } else if line.canonical {
            #expect(TestBytes.hex(ours) == line.hex, "\(line.note)")
        } else {
            #expect(try GoldenFrames.canonicalized(ours) == GoldenFrames.canonicalized(frame.bytes), "\(line.note)")
        }
    }

    @Test func everyTypeHasARequestAndAResponseLine() throws {
        let names = Set(try GoldenFrames.load().map(\.name))
        let missing = GoldenFrames.codecs.keys.filter { !names.contains($0) }.sorted()
        #expect(missing.isEmpty, "no golden line for \(missing)")
    }

    @Test func insertionOrderLinesReallyDifferFromCanonicalOrder() throws {
        // Lines built with cbor2 use insertion order; re-encoding them canonically must reorder
        // at least one, otherwise the decoded-map comparison would be testing nothing.
        let lines = try GoldenFrames.load().filter { !$0.canonical && $0.kind != "error" }
        let reordered = try lines.filter {
            try GoldenFrames.canonicalized(TestBytes.hex($0.hex)) != TestBytes.hex($0.hex)
        }
        #expect(!reordered.isEmpty)
    }
}

/// The request header a response frame answers (operation one lower).
func requestHeader(of response: SMPFrame) -> SMPHeader {
    var header = response.header
    header.operation = SMPOperation(rawValue: response.header.operation.rawValue &- 1)
    return header
}

/// Helpers shared by the group test files.
enum GroupTesting {
    /// The frame of a request, as lowercase hex.
    static func requestHex<R: SMPRequest>(_ request: R, sequence: UInt8 = 0, version: SMPVersion = .v2) throws -> String
    {
        TestBytes.hex(try SMPFrame.request(request, sequence: sequence, version: version).bytes)
    }

    /// Decodes `payload` as the response to `R`, through the frame and its envelope check.
    static func response<R: SMPRequest>(to type: R.Type, _ payload: CBOR, version: SMPVersion = .v2) throws
        -> R.Response
    {
        let header = SMPHeader(
            version: version,
            operation: R.operation,
            length: 0,
            group: R.group,
            sequence: 7,
            command: R.command
        )
        return try SMPFrame.response(payload: payload, to: header).decodeResponse(to: R.self)
    }

    /// The device error a response payload to `R` carries, or `nil` if it decodes as success.
    static func deviceError<R: SMPRequest>(_ type: R.Type, _ payload: CBOR) throws -> SMPDeviceError? {
        do {
            _ = try response(to: type, payload)
            return nil
        } catch let error as SMPDeviceError {
            return error
        }
    }
}

enum GoldenFrames {
    /// One line of the fixture.
    struct Line: Decodable, Sendable, CustomTestStringConvertible {
        var name: String
        var kind: String
        var hex: String
        var canonical: Bool
        var note: String
        var expectHex: String?
        var codeName: String?
        var expectError: String?

        enum CodingKeys: String, CodingKey {
            case name, kind, hex, canonical, note
            case expectHex = "expect_hex"
            case codeName = "code_name"
            case expectError = "expect_error"
        }

        var testDescription: String { "\(name) [\(kind)] \(note)" }
    }

    /// Decodes a frame as one type and re-encodes it canonically.
    struct Codec: Sendable {
        var kind: String
        var reencode: @Sendable (SMPFrame) throws -> [UInt8]
    }

    static func load() throws -> [Line] {
        guard
            let url = Bundle.module.url(forResource: "golden-frames", withExtension: "jsonl", subdirectory: "Fixtures")
        else { throw CocoaError(.fileNoSuchFile) }
        let text = try String(contentsOf: url, encoding: .utf8)
        return try text.split(separator: "\n").map { try JSONDecoder().decode(Line.self, from: Data($0.utf8)) }
    }

    /// The lines, for parameterised tests (empty if the file is missing, which
    /// ``GoldenFramesTests/theFileLoadsAndHasLines()`` reports).
    static let lines: [Line] = (try? load()) ?? []

    /// A frame with its payload re-encoded canonically: equal for equal headers and equal decoded
    /// maps, whatever the key order.
    static func canonicalized(_ bytes: [UInt8]) throws -> [UInt8] {
        let frame = try SMPFrame(parsing: bytes)
        let payload = CBORWriter.encode(try frame.payloadValue(), options: .init(canonical: true))
        return try SMPFrame(header: frame.header, payload: payload).bytes
    }

    private static let canonical = CBORWriter.Options(canonical: true)

    private static func requestCodec<R: SMPRequest>(_ type: R.Type) -> Codec {
        Codec(kind: "request") { frame in
            let request = try frame.decodeRequest(as: R.self)
            return try SMPFrame.request(
                request,
                sequence: frame.header.sequence,
                version: frame.header.version,
                options: canonical
            ).bytes
        }
    }

    private static func responseCodec<R: SMPRequest>(_ type: R.Type) -> Codec {
        Codec(kind: "response") { frame in
            let response = try frame.decodeResponse(to: R.self)
            return try SMPFrame.response(response, to: requestHeader(of: frame), options: canonical).bytes
        }
    }

    /// Every request type, by the name the fixture uses (`OSManagement.Echo`), with its response
    /// under `….Response`.
    static let codecs: [String: Codec] = {
        var table: [String: Codec] = [:]
        func add<R: SMPRequest>(_ type: R.Type) {
            let name = String(reflecting: type).split(separator: ".").dropFirst().joined(separator: ".")
            table[name] = requestCodec(type)
            table[name + ".Response"] = responseCodec(type)
        }
        add(OSManagement.Echo.self)
        add(OSManagement.ConsoleEchoControl.self)
        add(OSManagement.TaskStatistics.self)
        add(OSManagement.MemoryPoolStatistics.self)
        add(OSManagement.DateTimeRead.self)
        add(OSManagement.DateTimeWrite.self)
        add(OSManagement.Reset.self)
        add(OSManagement.MCUmgrParameters.self)
        add(OSManagement.ApplicationInfo.self)
        add(OSManagement.BootloaderInfo.self)
        add(ImageManagement.StateRead.self)
        add(ImageManagement.StateWrite.self)
        add(ImageManagement.Upload.self)
        add(ImageManagement.Erase.self)
        add(ImageManagement.SlotInfo.self)
        add(StatisticsManagement.GroupData.self)
        add(StatisticsManagement.ListGroups.self)
        add(SettingsManagement.Read.self)
        add(SettingsManagement.Write.self)
        add(SettingsManagement.Delete.self)
        add(SettingsManagement.Commit.self)
        add(SettingsManagement.Load.self)
        add(SettingsManagement.Save.self)
        add(LogManagement.Show.self)
        add(LogManagement.Clear.self)
        add(LogManagement.ModuleList.self)
        add(LogManagement.LevelList.self)
        add(LogManagement.List.self)
        add(CrashManagement.Trigger.self)
        add(RunManagement.Test.self)
        add(RunManagement.List.self)
        add(FileManagement.Download.self)
        add(FileManagement.Upload.self)
        add(FileManagement.Status.self)
        add(FileManagement.Hash.self)
        add(FileManagement.SupportedHashTypes.self)
        add(FileManagement.Close.self)
        add(ShellManagement.Execute.self)
        add(EnumerationManagement.GroupCount.self)
        add(EnumerationManagement.ListGroups.self)
        add(EnumerationManagement.GroupAtIndex.self)
        add(EnumerationManagement.GroupDetails.self)
        add(TransportManagement.Connect.self)
        add(TransportManagement.Disconnect.self)
        add(TransportManagement.Status.self)
        add(TransportManagement.ListTransports.self)
        add(TransportManagement.Modes.self)
        add(TransportManagement.ConfigDetails.self)
        add(ZephyrBasicManagement.EraseStorage.self)
        add(SUITManagement.ManifestList.self)
        add(SUITManagement.ManifestState.self)
        add(SUITManagement.EnvelopeUpload.self)
        add(SUITManagement.MissingImageState.self)
        add(SUITManagement.MissingImageUpload.self)
        add(SUITManagement.CacheRawUpload.self)
        add(SUITManagement.Cleanup.self)
        return table
    }()
}

/// A request built in Swift and the frame it must produce (default, non-canonical encoding:
/// keys in declaration order).
struct RequestCase: Sendable, CustomTestStringConvertible {
    let testDescription: String
    let hex: String
    let encode: @Sendable () throws -> String

    init<R: SMPRequest>(_ request: R, sequence: UInt8 = 0, version: SMPVersion = .v2, _ hex: String) {
        testDescription = "\(R.self)"
        self.hex = hex
        encode = { try GroupTesting.requestHex(request, sequence: sequence, version: version) }
    }
}

/// A typed group return code and the value and name the spec gives it.
struct ReturnCodeCase<G: SMPManagementGroup>: Sendable, CustomTestStringConvertible {
    let code: SMPGroupReturnCode<G>
    let value: Int
    let name: String

    init(_ code: SMPGroupReturnCode<G>, _ value: Int, _ name: String) {
        self.code = code
        self.value = value
        self.name = name
    }

    var testDescription: String { "\(value) \(name)" }

    /// Checks the static member, the table and the name lookup agree.
    func verify() {
        #expect(code.rawValue == value)
        #expect(code.name == name)
        #expect(G.returnCodeNames.indices.contains(value) && G.returnCodeNames[value] == name)
        #expect(G.group.returnCodeNames.map { $0 == G.returnCodeNames } ?? true)
    }
}
