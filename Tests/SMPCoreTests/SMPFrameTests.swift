import Foundation
import SMPCBOR
import SMPCore
import SMPTestSupport
import Testing

struct SMPFrameTests {
    /// A request type defined here so these tests do not depend on any group file.
    struct Probe: SMPWriteRequest {
        static var group: SMPGroup { .os }
        static var command: UInt8 { 0 }
        var d: String
        struct Response: Codable, Sendable, Hashable { var r: String }
    }

    @Test func buildsTheSmpPackagesEchoFrame() throws {
        let frame = try SMPFrame.request(Probe(d: "hello"), sequence: 0)
        #expect(TestBytes.hex(frame.bytes) == "0a00000900000000a161646568656c6c6f")
        let v1 = try SMPFrame.request(Probe(d: "hello"), sequence: 0, version: .v1)
        #expect(TestBytes.hex(v1.bytes) == "0200000900000000a161646568656c6c6f")
    }

    @Test func decodesAResponseAfterCheckingTheEnvelope() throws {
        let frame = try SMPFrame(parsing: TestBytes.hex("0b00000900000000a161726568656c6c6f"))
        #expect(try frame.decodeResponse(to: Probe.self) == Probe.Response(r: "hello"))
    }

    @Test func answersCopySequenceAndFlipTheOperation() throws {
        let request = try SMPFrame.request(Probe(d: "x"), sequence: 200, version: .v1)
        let response = try SMPFrame.response(Probe.Response(r: "x"), to: request.header)
        #expect(response.header.operation == .writeResponse)
        #expect(response.header.sequence == 200)
        #expect(response.header.version == .v1)
        #expect(throws: SMPError(.unexpectedOperation)) { try SMPFrame.response(payload: [:], to: response.header) }
    }

    @Test func lengthMustMatchThePayload() {
        #expect(throws: SMPError(.lengthMismatch)) { try SMPFrame(parsing: TestBytes.hex("0b00000a00000000a1617265")) }
        #expect(throws: SMPError(.lengthMismatch)) { try SMPFrame(parsing: TestBytes.hex("0b00000000000000a0")) }
    }

    @Test func aResponseForAnotherCommandIsRejected() throws {
        let other = try SMPFrame(parsing: TestBytes.hex("0b00000100010000a0"))
        #expect(throws: SMPError(.unexpectedOperation)) { try other.decodeResponse(to: Probe.self) }
    }

    @Test func payloadsLargerThanTheLengthFieldAreRefused() {
        let header = SMPHeader(operation: .write, length: 0, group: .os, sequence: 0, command: 0)
        #expect(throws: SMPError(.frameTooLarge)) {
            try SMPFrame(header: header, payload: [UInt8](repeating: 0, count: 65536))
        }
    }

    @Test func malformedPayloadKeepsTheCBOROffset() throws {
        let frame = try SMPFrame(parsing: TestBytes.hex("0b00000300000000a16172"))
        do {
            _ = try frame.decodeResponse(to: Probe.self)
            Issue.record("a truncated payload decoded")
        } catch let error as SMPError {
            #expect(error.code == .malformedPayload)
            #expect(error.cause as? CBORError == CBORError(.truncated, at: 3))
        }
    }

    @Test func wrongShapeIsAnInvalidResponse() throws {
        let frame = try SMPFrame(parsing: TestBytes.hex("0b00000400000000a1617201"))
        #expect(throws: SMPError(.invalidResponse)) { try frame.decodeResponse(to: Probe.self) }
    }
}

struct SMPResponseStatusTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var payload: CBOR
        var group: SMPGroup = .image
        /// `nil` when the payload means success.
        var expected: SMPDeviceError.Status?
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "no rc", payload: ["off": 0], expected: nil),
        Case(name: "rc 0", payload: ["rc": 0, "off": 0], expected: nil),
        Case(name: "err rc 0", payload: ["err": ["group": 1, "rc": 0]], expected: nil),
        Case(name: "v1 rc 8", payload: ["rc": 8], expected: .management(.notSupported)),
        Case(name: "unknown v1 rc", payload: ["rc": 77], expected: .management(SMPReturnCode(rawValue: 77))),
        Case(name: "user rc", payload: ["rc": 300], expected: .management(SMPReturnCode(rawValue: 300))),
        Case(name: "negative rc", payload: ["rc": -5], expected: .management(SMPReturnCode(rawValue: -5))),
        Case(name: "v2 err", payload: ["err": ["group": 1, "rc": 9]], expected: .group(.image, 9)),
        Case(
            name: "v2 err with unknown code",
            payload: ["err": ["rc": 999, "group": 1]],
            expected: .group(.image, 999)
        ),
        Case(name: "NCS 2.4 ret", payload: ["ret": ["group": 8, "rc": 3]], expected: .group(.fileSystem, 3)),
        Case(name: "shell ret is a result", payload: ["o": "x", "ret": 1], group: .shell, expected: nil),
        Case(name: "legacy shell rc beside output", payload: ["o": "x", "rc": 2], group: .shell, expected: nil),
        Case(name: "shell rc without output", payload: ["rc": 8], group: .shell, expected: .management(.notSupported)),
    ]

    @Test(arguments: cases)
    func readsTheEnvelope(_ sample: Case) {
        do {
            try SMPResponseStatus.check(sample.payload, group: sample.group, command: 1)
            #expect(sample.expected == nil, "expected an error")
        } catch let error as SMPDeviceError {
            #expect(error.status == sample.expected)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test(
        arguments: [
            ["rc": "8"], ["err": 9], ["err": ["rc": 9]], ["err": ["group": -1, "rc": 9]], ["rsn": 5], "not a map",
        ] as [CBOR]
    )
    func malformedEnvelopesAreErrorsNotSuccess(_ payload: CBOR) {
        #expect(throws: SMPError(.invalidResponse)) { try SMPResponseStatus.check(payload, group: .os, command: 0) }
    }

    @Test func reasonAndNamesAreReported() {
        do {
            try SMPResponseStatus.check(["rc": 3, "rsn": "img too large"], group: .image, command: 1)
        } catch let error as SMPDeviceError {
            #expect(error.reason == "img too large")
            // A v1 `rc` is the SMP layer's code, whatever the group: named as the device's.
            #expect(error.description == "device error 3 EINVAL (invalid value in the request): img too large")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }
}
