import SMPBytes
import SMPHCI
import Testing

/// The bytes of hex text from ``BumbleVectors`` (whitespace and newlines ignored).
func bytes(_ hex: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [UInt8] {
    try #require(Hex.decode(hex), "not hex: \(hex)", sourceLocation: sourceLocation)
}

/// The one packet that H4 bytes hold, through the decoder.
func h4Packet(_ hex: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> HCIPacket {
    var decoder = H4Decoder()
    decoder.append(try bytes(hex, sourceLocation: sourceLocation))
    let packet = try #require(try decoder.next(), "no whole packet in \(hex)", sourceLocation: sourceLocation)
    #expect(try decoder.next() == nil, sourceLocation: sourceLocation)
    #expect(decoder.bufferedByteCount == 0, sourceLocation: sourceLocation)
    return packet
}

/// The event that H4 bytes hold, parsed.
func h4Event(_ hex: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> HCIEvent {
    guard case .event(let packet) = try h4Packet(hex, sourceLocation: sourceLocation) else {
        Issue.record("not an event: \(hex)", sourceLocation: sourceLocation)
        throw HCIError(.malformedPacket)
    }
    return try HCIEvent(packet)
}
