// Fuzz target `cbor`: CBORReader (tree and streaming reads) and the Codable CBORDecoder over it.
//
// Any input must be rejected with a CBORError/DecodingError or decoded; never a crash, a hang or
// an allocation larger than the input. Properties checked on every input that decodes:
//   - decode → encode (insertion order) → decode gives the same value (floats by bit pattern);
//   - encoding with sorted keys (bytewise, length-first) is idempotent: re-decoding and
//     re-encoding reproduces the bytes exactly;
//   - the streaming reader's skipValue() consumes exactly what readValue() consumes.
import FuzzSupport
import Foundation
import SMPCBOR

/// A message shape with one field of every kind the Codable decoder converts to.
struct Shape: Codable {
    var u8: UInt8?
    var i16: Int16?
    var i64: Int64?
    var u64: UInt64?
    var int: Int?
    var float: Float?
    var double: Double?
    var bool: Bool?
    var text: String?
    var data: Data?
    var list: [Int32]?
    var nested: [String: [UInt16]]?
    var child: Child?
    var kind: Kind?
    var any: CBOR?

    enum CodingKeys: String, CodingKey {
        case u8 = "a", i16 = "b", i64 = "c", u64 = "d", int = "off", float = "f", double = "g", bool = "h"
        case text = "name", data = "data", list = "images", nested = "n", child = "err", kind = "k", any = "x"
    }
    struct Child: Codable {
        var group: UInt16
        var rc: Int
    }
    enum Kind: String, Codable { case one, two }
}

/// Keyed by integers, as SUIT's and COSE's maps are.
struct IntKeyed: Codable {
    var one: Int?
    var two: [UInt8]?
    var three: String?
    enum CodingKeys: Int, CodingKey { case one = 1, two = 2, three = 3 }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = count > 0 && start != nil ? Array(UnsafeBufferPointer(start: start, count: count)) : []

    // 1. The tree reader, with and without the duplicate-key check.
    for limits in [CBORReader.Limits(), CBORReader.Limits(maximumDepth: 16, rejectDuplicateKeys: false)] {
        var reader = CBORReader(bytes, limits: limits)
        var items: [CBOR] = []
        var ends: [Int] = []
        while !reader.isAtEnd, items.count < 64 {
            guard let value = try? reader.readValue() else { break }
            items.append(value)
            ends.append(reader.offset)
        }
        // 2. skipValue() must consume exactly the same bytes, item by item.
        var skipper = CBORReader(bytes, limits: limits)
        for end in ends {
            do { try skipper.skipValue() } catch { fatalError("skipValue failed where readValue succeeded: \(error)") }
            check(skipper.offset == end, "skipValue ended at \(skipper.offset), readValue at \(end)")
        }
        for value in items {
            roundTrip(value, limits: limits)
        }
    }

    // 3. Exactly one item, through the Codable decoder into typed shapes and the CBOR tree.
    let decoder = CBORDecoder()
    _ = try? decoder.decode(Shape.self, from: bytes)
    _ = try? decoder.decode(IntKeyed.self, from: bytes)
    _ = try? decoder.decode([String: CBOR].self, from: bytes)
    _ = try? decoder.decode([UInt8].self, from: bytes)
    _ = try? decoder.decode([Double?].self, from: bytes)
    if let value = try? CBORReader.decode(bytes) {
        _ = try? decoder.decode(CBOR.self, from: value)
        _ = try? decoder.decode(Shape.self, from: value)
        // Through the Codable encoder and back: must not crash (the shape may differ).
        if let encoded = try? CBOREncoder().encodeToBytes(value) {
            _ = try? CBORReader.decode(encoded)
        }
    }

    // 4. Streaming reads the hot-message decoders use, driven by the same bytes.
    var stream = CBORReader(bytes)
    let keys = CBORKeySet(["off", "data", "len", "sha", "image", "upgrade", "a-key-longer-than-eight"])
    if let count = try? stream.readMapHeader() {
        var remaining = count ?? 64
        while remaining > 0 {
            remaining -= 1
            if count == nil, (try? stream.readBreakIfPresent()) ?? true { break }
            guard let key = try? stream.readKey(keys) else { break }
            let ok: Bool
            switch key {
            case 0: ok = (try? stream.readUnsigned()) != nil
            case 1: ok = (try? stream.readByteString()) != nil
            case 4: ok = (try? stream.readText()) != nil
            case 5: ok = (try? stream.readBool()) != nil
            default: ok = (try? stream.skipValue()) != nil
            }
            if !ok { break }
        }
    }
    return 0
}

func roundTrip(_ value: CBOR, limits: CBORReader.Limits) {
    _ = value.diagnostic(abbreviateBytesOver: 16)
    let encoded = CBORWriter.encode(value)
    let decoded: CBOR
    do {
        decoded = try CBORReader.decode(encoded, limits: limits)
    } catch {
        fatalError("re-encoded value does not decode: \(error)\nvalue: \(value)\nbytes: \(encoded)")
    }
    check(decoded == value, "decode(encode(v)) != v: \(value) vs \(decoded)")
    check(CBORWriter.encode(decoded) == encoded, "insertion-order encoding is not stable")
    for order in [CBORWriter.Options.MapKeyOrder.bytewise, .lengthFirst] {
        let options = CBORWriter.Options(mapKeyOrder: order)
        let sorted = CBORWriter.encode(value, options: options)
        guard let again = try? CBORReader.decode(sorted, limits: limits) else {
            fatalError("\(order) encoding does not decode: \(value)")
        }
        check(CBORWriter.encode(again, options: options) == sorted, "\(order) encoding is not idempotent: \(value)")
    }
}
