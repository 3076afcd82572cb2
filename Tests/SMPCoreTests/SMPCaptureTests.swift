import SMPBytes
import SMPCBOR
import SMPCore
import Testing

/// Captures read as `mcumgr decode` reads them (the command's own tests check its output).
@Suite struct SMPCaptureTests {
    @Test func framesBackToBackAreEachAFrameWithTheirText() throws {
        let request = try SMPFrame(
            header: SMPHeader(operation: .write, length: 0, group: .os, sequence: 5, command: 0),
            payload: CBORWriter.encode(["d": "hi"])
        )
        let answer = try SMPFrame(
            header: SMPHeader(operation: .writeResponse, length: 0, group: .os, sequence: 5, command: 0),
            payload: CBORWriter.encode(["rc": 8])
        )
        let items = try SMPCaptureItem.decode(request.bytes + answer.bytes)
        #expect(items == [.frame(request), .frame(answer)])
        let text = try items[1].text()
        #expect(text.hasPrefix("header: SMP v2 write-response, group 0 (os), command 0, sequence 5"))
        #expect(text.contains("payload: {\"rc\": 8}\nstatus: "))
    }

    @Test func bareCBORAndNeither() throws {
        #expect(try SMPCaptureItem.decode([0xa1, 0x61, 0x64, 0x01]) == [.cbor(["d": 1])])
        #expect(throws: SMPCaptureError.self) { try SMPCaptureItem.decode([0xff, 0xff]) }
    }
}
