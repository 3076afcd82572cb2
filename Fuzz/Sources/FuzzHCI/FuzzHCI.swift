// Fuzz target `hci`: the LE host's existing parsers of controller bytes (SMPHCI), in the order
// the I/O layer runs them: H4Decoder → HCIEvent / HCIACLDataPacket → L2CAPReassembler →
// LESignalling (and the ATT decoder for the ATT channel).
//
// Input: bytes 0–1 seed the chunk sizes; the rest is an H4 byte stream.
// Properties: the decoder gives the same packets (or the same error) however the stream is cut;
// the packets it gives re-encode to the stream they came from; every LE signalling answer is a
// PDU on the signalling channel holding a command that parses.
import FuzzSupport
import SMPHCI

/// The packets of a stream fed in the given chunks, and the error that ended it, if any.
func decode(_ chunks: [ArraySlice<UInt8>]) -> ([HCIPacket], HCIError?) {
    var decoder = H4Decoder(maximumACLDataLength: 1024)
    var packets: [HCIPacket] = []
    for chunk in chunks {
        decoder.append(chunk)
        do {
            while let packet = try decoder.next() { packets.append(packet) }
        } catch {
            return (packets, error)
        }
    }
    return (packets, nil)
}

func checkSignalling(_ payload: [UInt8]) {
    let pdu: L2CAPPDU
    switch LESignalling.answer(payload) {
    case .reply(let reply), .acceptUpdate(let reply, _): pdu = reply
    case .none: return
    }
    check(pdu.channelID == .leSignalling, "a signalling answer on channel \(pdu.channelID)")
    check((try? L2CAPSignal(bytes: pdu.payload)) != nil, "a signalling answer that does not parse")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let start, count >= 2 else { return 0 }
    let input = UnsafeBufferPointer(start: start, count: count)
    var splitter = Splitter(seed: UInt16(input[0]) << 8 | UInt16(input[1]), largest: 64)
    let stream = Array(input.dropFirst(2))
    let (whole, wholeError) = decode([stream[...]])
    let (cut, cutError) = decode(splitter.split(stream))
    check(whole == cut && wholeError?.code == cutError?.code, "H4 decoding depends on how the stream is cut")
    let encoded = whole.flatMap { packet -> [UInt8] in H4Encoder.encode(packet) }
    check(Array(stream.prefix(encoded.count)) == encoded, "packets do not re-encode to their bytes")

    var reassembler = L2CAPReassembler(maximumPayloadLength: 1024)
    for packet in whole {
        switch packet {
        case .event(let event):
            _ = try? HCIEvent(event)
        case .acl(let acl):
            guard let pdu = try? reassembler.receive(acl) else { continue }
            if pdu.channelID == .leSignalling { checkSignalling(pdu.payload) }
            if pdu.channelID == .att { _ = try? ATTPDU(bytes: pdu.payload) }
        default:
            break
        }
    }
    return 0
}
