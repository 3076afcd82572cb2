// Fuzz target `dbus-message`: every byte a bus or a remote process (BlueZ, a GATT client through
// BlueZ) sends us goes through DBusMessageFramer and DBusMessage(decoding:) first, then the
// SASL reply lines through DBusAuthentication.
//
// Input: byte 0 picks the read-chunk seed's high byte and which SASL state is probed, bytes 1–2
// seed the chunking; the rest is a byte stream as read from the socket.
// Properties: nothing traps or allocates by a declared length (libFuzzer's malloc limit); a
// stream fed in any chunks frames into the same messages as fed whole; a message that decodes
// re-encodes in its own byte order to bytes that decode to a message encoding to the same bytes
// (writer and reader agree, whatever the field order or unknown fields of the input); a decoded
// message's signature is valid and its descriptor indices stay below its UNIX_FDS.
import FuzzSupport
import SMPBytes
import SMPDBus

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let start, count >= 3 else { return 0 }
    let input = UnsafeBufferPointer(start: start, count: count)
    var splitter = Splitter(seed: UInt16(input[1]) << 8 | UInt16(input[2]), largest: 1 + Int(input[0]) * 16)
    let stream = Array(input.dropFirst(3))

    let whole = frames(stream, chunks: [stream[...]])
    let chunked = frames(stream, chunks: splitter.split(stream))
    check(whole.messages == chunked.messages, "chunking changed the messages")
    check(whole.failed == chunked.failed, "chunking changed whether the stream failed")

    for bytes in whole.messages { roundTrip(bytes) }
    // The stream as one message too: most inputs are a single message.
    roundTrip(stream)
    probeAuthentication(stream, state: input[0])
    return 0
}

/// Frames a stream fed in the given chunks: the messages until the first error.
func frames(_ stream: [UInt8], chunks: [ArraySlice<UInt8>]) -> (messages: [[UInt8]], failed: Bool) {
    var framer = DBusMessageFramer()
    var messages: [[UInt8]] = []
    for chunk in chunks {
        framer.append(chunk)
        do {
            while let message = try framer.next() { messages.append(message) }
        } catch {
            return (messages, true)
        }
    }
    return (messages, false)
}

func roundTrip(_ bytes: [UInt8]) {
    guard let message = try? DBusMessage(decoding: bytes) else { return }
    check(message.serial != 0, "a zero serial decoded")
    _ = try? DBusSignature(message.signature.rawValue)
    for value in message.body { checkDescriptors(value, limit: message.unixFDCount) }
    let endianness: Endianness = bytes[0] == UInt8(ascii: "B") ? .big : .little
    let encoded: [UInt8]
    do {
        encoded = try message.encoded(endianness: endianness)
    } catch {
        // A decoded message always re-encodes: everything it holds was validated on the way in.
        check(false, "a decoded message does not encode: \(error)")
        return
    }
    guard let again = try? DBusMessage(decoding: encoded) else {
        check(false, "our own encoding does not decode")
        return
    }
    check((try? again.encoded(endianness: endianness)) == encoded, "encode → decode → encode changed the bytes")
}

func checkDescriptors(_ value: DBusValue, limit: UInt32) {
    switch value {
    case .unixFD(let index): check(index < limit, "descriptor \(index) of \(limit)")
    case .variant(let inner): checkDescriptors(inner, limit: limit)
    case .array(_, let elements), .structure(let elements):
        for element in elements { checkDescriptors(element, limit: limit) }
    case .dictionary(_, _, let entries):
        for entry in entries {
            checkDescriptors(entry.key, limit: limit)
            checkDescriptors(entry.value, limit: limit)
        }
    default: break
    }
}

/// The server's SASL lines reach DBusAuthentication one by one.
func probeAuthentication(_ stream: [UInt8], state: UInt8) {
    var auth = DBusAuthentication(uid: 1000, negotiateUnixFDs: state & 1 == 0)
    let lines = stream.split(separator: 10, maxSplits: 3).map { String(decoding: $0, as: UTF8.self) }
    for line in lines {
        guard (try? auth.receive(line: line)) != nil else { return }
    }
}
