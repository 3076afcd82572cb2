// Fuzz target `att`: the Attribute Protocol as a peer's bytes reach it (SMPHCI): the PDU decoder,
// the peripheral's GATTServer, the central's GATTClientSetup (at any of its steps) and its
// GATTClientChannel.
//
// Input: byte 0 picks the channel's ATT MTU (23...533), byte 1 the step the setup has reached
// (driven there against a GATTServer); the rest is PDUs, each a length byte then that many bytes.
// Properties: a decoded PDU encodes to bytes that decode to it again; every PDU the server, the
// setup and the channel send decodes, and the server's answers fit its MTU; the server hands on
// SMP data only for writes to the SMP characteristic; the channel gives a value only for a
// notification or indication of the SMP characteristic.
import FuzzSupport
import SMPHCI

/// The setup after `steps` answers of a GATTServer (fewer if it is ready sooner).
func setup(afterSteps steps: Int) -> GATTClientSetup {
    var setup = GATTClientSetup()
    var server = GATTServer(deviceName: "fuzz")
    var action = setup.start()
    for _ in 0..<steps {
        guard case .send(let pdus, _) = action, let request = pdus.last, let reply = server.receive(request).reply
        else {
            break
        }
        action = setup.receive(reply)
    }
    return setup
}

func checkDecodes(_ pdu: [UInt8], _ who: String) {
    check((try? ATTPDU(bytes: pdu)) != nil, "\(who) sent a PDU that does not decode: \(pdu)")
}

func checkDecoder(_ bytes: [UInt8]) -> ATTPDU? {
    guard let pdu = try? ATTPDU(bytes: bytes) else { return nil }
    check((try? ATTPDU(bytes: pdu.encoded())) == pdu, "\(pdu) does not survive encoding")
    return pdu
}

func checkServer(_ server: inout GATTServer, _ bytes: [UInt8], _ pdu: ATTPDU?) {
    let output = server.receive(bytes)
    if let reply = output.reply {
        checkDecodes(reply, "the server")
        check(reply.count <= server.mtu, "a server answer of \(reply.count) bytes at MTU \(server.mtu)")
    }
    if output.smpData != nil {
        switch pdu {
        case .writeCommand(GATTServer.smpValueHandle, _), .writeRequest(GATTServer.smpValueHandle, _): break
        default: check(false, "SMP data from \(String(describing: pdu))")
        }
    }
}

func checkChannel(_ channel: inout GATTClientChannel, _ bytes: [UInt8], _ pdu: ATTPDU?) {
    guard let output = try? channel.receive(bytes) else { return }
    if let reply = output.reply { checkDecodes(reply, "the channel") }
    if output.value != nil {
        switch pdu {
        case .handleValueNotification(channel.valueHandle, _), .handleValueIndication(channel.valueHandle, _): break
        default: check(false, "a value from \(String(describing: pdu))")
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let start, count >= 2 else { return 0 }
    let input = Array(UnsafeBufferPointer(start: start, count: count))
    var channel = GATTClientChannel(mtu: 23 + Int(input[0]) * 2, valueHandle: 0x0007, cccdHandle: 0x0008)
    var client = setup(afterSteps: Int(input[1]) % 7)
    var server = GATTServer(deviceName: "fuzz")
    var offset = 2
    while offset < input.count {
        let length = Int(input[offset])
        let bytes = Array(input[(offset + 1)..<min(input.count, offset + 1 + length)])
        offset += 1 + length
        let pdu = checkDecoder(bytes)
        checkServer(&server, bytes, pdu)
        checkChannel(&channel, bytes, pdu)
        if case .send(let pdus, _) = client.receive(bytes) { for sent in pdus { checkDecodes(sent, "the setup") } }
        _ = client.timedOut()
    }
    return 0
}
