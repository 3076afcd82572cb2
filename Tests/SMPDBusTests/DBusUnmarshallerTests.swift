import SMPBytes
import Testing

@testable import SMPDBus

/// Bytes a remote process may send that break the specification: each is refused with a
/// specific error, none crashes.
struct DBusUnmarshallerTests {
    /// A valid little-endian call with body `sayb`; offsets below are into it.
    static func valid(_ body: [DBusValue] = [.string("hi"), .bytes([1, 2, 3]), .boolean(true)]) throws -> [UInt8] {
        try DBusMessage(kind: .methodCall, serial: 7, path: "/a", member: "M", body: body).encoded()
    }

    static func bodyStart(_ bytes: [UInt8]) -> Int {
        let fields = Int(bytes[12]) | Int(bytes[13]) << 8
        return (16 + fields + 7) & ~7
    }

    /// A method call with the given header fields and an empty body, marshalled by hand.
    static func handBuilt(_ fields: [DBusValue]) throws -> [UInt8] {
        var marshaller = DBusMarshaller()
        for byte in [UInt8(ascii: "l"), 1, 0, 1] { try marshaller.write(.byte(byte), as: .byte) }
        try marshaller.write(.uint32(0), as: .uint32)
        try marshaller.write(.uint32(1), as: .uint32)
        let type = DBusType.array(.structure([.byte, .variant]))
        try marshaller.write(.array(.structure([.byte, .variant]), fields), as: type)
        marshaller.pad(to: 8)
        return marshaller.bytes
    }

    static func field(_ code: UInt8, _ value: DBusValue) -> DBusValue {
        .structure([.byte(code), .variant(value)])
    }

    @Test func handBuiltMessagesDecode() throws {
        let message = try DBusMessage(
            decoding: try Self.handBuilt([Self.field(1, .objectPath("/a")), Self.field(3, .string("M"))])
        )
        #expect(message.member == "M")
    }

    @Test func aValidMessageDecodes() throws {
        let message = try DBusMessage(decoding: try Self.valid())
        #expect(message.body == [.string("hi"), .bytes([1, 2, 3]), .boolean(true)])
        #expect(message.signature == "sayb")
    }

    @Test func nonZeroPaddingIsRefused() throws {
        var bytes = try Self.valid()
        let start = Self.bodyStart(bytes)
        // "hi\0" ends at start + 7; one padding byte before the array's length at start + 8.
        bytes[start + 7] = 1
        #expect(throws: DBusError(.malformedMessage)) { try DBusMessage(decoding: bytes) }
    }

    @Test func aBooleanOtherThanZeroOrOneIsRefused() throws {
        var bytes = try Self.valid()
        bytes[bytes.count - 4] = 2
        #expect(throws: DBusError(.malformedMessage)) { try DBusMessage(decoding: bytes) }
    }

    @Test func aStringWithoutItsNulIsRefused() throws {
        var bytes = try Self.valid()
        bytes[Self.bodyStart(bytes) + 6] = 0x41
        #expect(throws: DBusError(.malformedMessage)) { try DBusMessage(decoding: bytes) }
    }

    @Test func aStringWithInvalidUTF8IsRefused() throws {
        var bytes = try Self.valid()
        bytes[Self.bodyStart(bytes) + 4] = 0xFF
        #expect(throws: DBusError(.malformedMessage)) { try DBusMessage(decoding: bytes) }
    }

    @Test func aStringWithAnInnerNulIsRefused() throws {
        var bytes = try Self.valid()
        bytes[Self.bodyStart(bytes) + 4] = 0
        #expect(throws: DBusError(.malformedMessage)) { try DBusMessage(decoding: bytes) }
    }

    @Test func anArrayLongerThanTheBodyIsRefused() throws {
        var bytes = try Self.valid()
        bytes[Self.bodyStart(bytes) + 8] = 200
        #expect(throws: DBusError(.malformedMessage)) { try DBusMessage(decoding: bytes) }
    }

    @Test func anArrayOver64MiBIsRefusedWithoutAllocating() throws {
        var bytes = try Self.valid()
        let at = Self.bodyStart(bytes) + 8
        bytes.replaceSubrange(at..<(at + 4), with: [0, 0, 0, 0x10])
        #expect(throws: DBusError(.limitExceeded)) { try DBusMessage(decoding: bytes) }
    }

    @Test func anArrayCutInsideAnElementIsRefused() throws {
        // ai with a length of 6: not a whole number of 4-byte elements.
        var bytes = try Self.valid([.array(.int32, [.int32(1), .int32(2)])])
        bytes[Self.bodyStart(bytes)] = 6
        #expect(throws: DBusError(.malformedMessage)) { try DBusMessage(decoding: bytes) }
    }

    @Test func aDescriptorIndexBeyondWhatCameIsRefused() throws {
        var message = DBusMessage(kind: .methodCall, serial: 1, path: "/a", member: "M", body: [.unixFD(0)])
        message.unixFDCount = 1
        var bytes = try message.encoded()
        bytes[bytes.count - 4] = 1
        #expect(throws: DBusError(.malformedMessage)) { try DBusMessage(decoding: bytes) }
    }

    @Test func aVariantHoldingTwoTypesIsRefused() throws {
        // v with signature "yy".
        let bytes = try Self.valid([.variant(.byte(1))])
        var patched = bytes
        let start = Self.bodyStart(bytes)
        #expect(patched[start] == 1 && patched[start + 1] == UInt8(ascii: "y"))
        patched.replaceSubrange(start..<(start + 4), with: [2, UInt8(ascii: "y"), UInt8(ascii: "y"), 0])
        #expect(throws: DBusError(.malformedMessage)) { try DBusMessage(decoding: patched) }
    }

    @Test func variantsNestedBeyondTheLimitAreRefused() throws {
        // 65 variants inside each other, built by hand (the writer refuses them).
        var body: [UInt8] = []
        for _ in 0..<65 { body += [1, UInt8(ascii: "v"), 0] }
        body += [1, UInt8(ascii: "y"), 0, 9]
        var header = try DBusMessage(kind: .methodCall, serial: 1, path: "/a", member: "M", body: [.variant(.byte(9))])
            .encoded()
        let start = Self.bodyStart(header)
        header.removeSubrange(start...)
        header.replaceSubrange(4..<8, with: withUnsafeBytes(of: UInt32(body.count).littleEndian, Array.init))
        #expect(throws: DBusError(.limitExceeded)) { try DBusMessage(decoding: header + body) }
    }

    @Test func theWriterRefusesVariantsNestedBeyondTheLimit() {
        var value = DBusValue.byte(1)
        for _ in 0..<70 { value = .variant(value) }
        let message = DBusMessage(kind: .methodCall, serial: 1, path: "/a", member: "M", body: [value])
        #expect(throws: DBusError.self) { try message.encoded() }
    }

    enum HeaderDamage: String, CaseIterable, Sendable {
        case zeroSerial, unknownByteOrder, oneByteShort, oneByteLong
    }

    @Test(arguments: HeaderDamage.allCases)
    func brokenHeadersAreRefused(_ damage: HeaderDamage) throws {
        var bytes = try Self.valid()
        switch damage {
        case .zeroSerial: bytes.replaceSubrange(8..<12, with: [0, 0, 0, 0])
        case .unknownByteOrder: bytes[0] = UInt8(ascii: "x")
        case .oneByteShort: bytes.removeLast()
        case .oneByteLong: bytes.append(0)
        }
        #expect(throws: DBusError.self) { try DBusMessage(decoding: bytes) }
    }

    @Test func anUnknownTypeOrVersionIsUnsupportedNotMalformed() throws {
        var bytes = try Self.valid()
        bytes[1] = 9
        #expect(throws: DBusError(.unsupported)) { try DBusMessage(decoding: bytes) }
        bytes = try Self.valid()
        bytes[3] = 2
        #expect(throws: DBusError(.unsupported)) { try DBusMessage(decoding: bytes) }
    }

    @Test func aMethodCallWithoutAMemberIsRefused() throws {
        let bytes = try DBusMessage(kind: .signal, serial: 1, path: "/a", interface: "a.b", member: "M").encoded()
        var patched = bytes
        patched[1] = DBusMessage.Kind.error.rawValue
        // An error needs an error name and a reply serial: this one has neither.
        #expect(throws: DBusError(.malformedMessage)) { try DBusMessage(decoding: patched) }
    }

    @Test func aHeaderFieldGivenTwiceIsRefused() throws {
        let path = Self.field(1, .objectPath("/a"))
        let bytes = try Self.handBuilt([path, path, Self.field(3, .string("M"))])
        #expect(throws: DBusError(.malformedMessage)) { try DBusMessage(decoding: bytes) }
    }

    @Test func aHeaderFieldOfTheWrongTypeIsRefused() throws {
        let bytes = try Self.handBuilt([Self.field(1, .string("/a")), Self.field(3, .string("M"))])
        #expect(throws: DBusError(.malformedMessage)) { try DBusMessage(decoding: bytes) }
    }

    @Test func unknownHeaderFieldsAreIgnored() throws {
        let unknown = Self.field(200, .array(.string, [.string("x")]))
        let bytes = try Self.handBuilt([Self.field(1, .objectPath("/a")), unknown, Self.field(3, .string("M"))])
        let message = try DBusMessage(decoding: bytes)
        #expect(message.member == "M" && message.path == "/a")
    }

    @Test func aBodyWithoutASignatureIsRefused() throws {
        var bytes = try DBusMessage(kind: .methodCall, serial: 1, path: "/a", member: "M").encoded()
        bytes.replaceSubrange(4..<8, with: [4, 0, 0, 0])
        bytes += [1, 0, 0, 0]
        #expect(throws: DBusError(.malformedMessage)) { try DBusMessage(decoding: bytes) }
    }

    @Test func invalidNamesAreRefusedOnBothSides() {
        #expect(throws: DBusError(.invalidName)) {
            try DBusMessage(kind: .methodCall, serial: 1, path: "/a", interface: "noDots", member: "M").encoded()
        }
        #expect(throws: DBusError(.invalidName)) {
            try DBusMessage(kind: .methodCall, serial: 1, path: "/a", member: "1bad").encoded()
        }
        for text in ["/a//b", "/a/", "a", "", "/a-b"] {
            #expect(throws: DBusError(.invalidName)) { try DBusObjectPath(String(text)) }
        }
        #expect(DBusNames.isBusName(":1.42"))
        #expect(DBusNames.isBusName("org.bluez"))
        #expect(!DBusNames.isBusName("org"))
        #expect(!DBusNames.isBusName("org..bluez"))
    }

    @Test func theWriterRefusesAValueOfTheWrongType() {
        var marshaller = DBusMarshaller()
        #expect(throws: DBusError(.typeMismatch)) { try marshaller.write(.string("x"), as: .uint32) }
        #expect(throws: DBusError(.typeMismatch)) {
            try marshaller.write(.array(.int32, [.string("x")]), as: .array(.int32))
        }
        #expect(throws: DBusError(.typeMismatch)) { try marshaller.write(.string("a\u{0}b"), as: .string) }
    }
}
