import Foundation
import SMPCBOR
import SMPTestSupport
import Testing

/// Property tests over random CBOR values from a seeded generator (each seed replays exactly):
/// round trips through the writer and reader, deterministic (sorted-key) encoding, the
/// indefinite-length and long-argument forms a peer may send, and the Codable layer.
struct CBORPropertyTests {
    static let seeds: [UInt64] = Array(1...40)

    @Test(arguments: seeds)
    func encodeThenDecodeGivesTheSameValue(seed: UInt64) throws {
        var random = TestBytes.SeededGenerator(seed: seed)
        for _ in 0..<25 {
            let value = RandomCBOR.value(depth: 4, using: &random)
            let encoded = CBORWriter.encode(value)
            let decoded = try CBORReader.decode(encoded)
            #expect(decoded == value, "seed \(seed): \(value)")
            // And the encoding of what was decoded is the same bytes (definite, shortest form).
            #expect(CBORWriter.encode(decoded) == encoded, "seed \(seed): \(value)")
        }
    }

    @Test(arguments: seeds)
    func deterministicEncodingDoesNotDependOnInsertionOrderAndReencodesIdentically(seed: UInt64) throws {
        var random = TestBytes.SeededGenerator(seed: seed)
        for _ in 0..<25 {
            let value = RandomCBOR.value(depth: 4, using: &random)
            let shuffled = RandomCBOR.shufflingMaps(value, using: &random)
            for order in [CBORWriter.Options.MapKeyOrder.bytewise, .lengthFirst] {
                let options = CBORWriter.Options(mapKeyOrder: order)
                let encoded = CBORWriter.encode(value, options: options)
                #expect(CBORWriter.encode(shuffled, options: options) == encoded, "seed \(seed) \(order): \(value)")
                let decoded = try CBORReader.decode(encoded)
                #expect(CBORWriter.encode(decoded, options: options) == encoded, "seed \(seed) \(order): \(value)")
                #expect(RandomCBOR.mapKeysAreSorted(encoded, order: order), "seed \(seed) \(order): \(value)")
            }
        }
    }

    @Test(arguments: seeds)
    func indefiniteLengthsAndLongArgumentsDecodeToTheSameValue(seed: UInt64) throws {
        var random = TestBytes.SeededGenerator(seed: seed)
        for _ in 0..<25 {
            let value = RandomCBOR.value(depth: 4, using: &random)
            let loose = RandomCBOR.looseEncoding(value, using: &random)
            let decoded = try CBORReader.decode(loose)
            #expect(decoded == value, "seed \(seed): \(value) from \(TestBytes.hex(loose))")
            // Streaming: skipping the item consumes exactly all of it.
            var reader = CBORReader(loose)
            try reader.skipValue()
            #expect(reader.isAtEnd, "seed \(seed)")
        }
    }

    @Test(arguments: seeds)
    func everyProperPrefixOfAnEncodingIsRejected(seed: UInt64) {
        var random = TestBytes.SeededGenerator(seed: seed)
        let value = RandomCBOR.value(depth: 3, using: &random)
        let encoded = CBORWriter.encode(value)
        for length in 0..<encoded.count {
            #expect(throws: CBORError.self, "seed \(seed), prefix \(length)") {
                try CBORReader.decode(encoded[..<length])
            }
        }
    }

    @Test(arguments: seeds)
    func codableValuesRoundTrip(seed: UInt64) throws {
        var random = TestBytes.SeededGenerator(seed: seed)
        for _ in 0..<25 {
            let message = RandomMessage.make(using: &random)
            for options in [CBORWriter.Options(), .init(mapKeyOrder: .bytewise), .init(mapKeyOrder: .lengthFirst)] {
                let bytes = try CBOREncoder(options: options).encodeToBytes(message)
                #expect(try CBORDecoder().decode(RandomMessage.self, from: bytes) == message, "seed \(seed)")
            }
        }
    }
}

/// A message with a field of each kind SMP uses.
struct RandomMessage: Codable, Hashable {
    var off: UInt64
    var delta: Int64
    var small: Int8
    var name: String
    var data: Data
    var list: [UInt32]
    var ratio: Double
    var flag: Bool?
    var nested: [String: [Int16]]
    var child: Child?

    struct Child: Codable, Hashable {
        var group: UInt16
        var rc: Int
    }

    static func make(using random: inout TestBytes.SeededGenerator) -> RandomMessage {
        RandomMessage(
            off: random.next() >> Int.random(in: 0...63, using: &random),
            delta: Int64(bitPattern: random.next()) >> Int64.random(in: 0...63, using: &random),
            small: Int8.random(in: .min ... .max, using: &random),
            name: RandomCBOR.text(using: &random),
            data: Data(RandomCBOR.bytes(using: &random)),
            list: (0..<Int.random(in: 0...5, using: &random)).map { _ in UInt32.random(in: 0 ... .max, using: &random)
            },
            ratio: Double(Int.random(in: -1000...1000, using: &random)) / 8,
            flag: Bool.random(using: &random) ? Bool.random(using: &random) : nil,
            nested: Dictionary(
                uniqueKeysWithValues: (0..<Int.random(in: 0...3, using: &random)).map { index in
                    ("k\(index)", [Int16.random(in: .min ... .max, using: &random)])
                }
            ),
            child: Bool.random(using: &random)
                ? Child(
                    group: UInt16.random(in: 0 ... .max, using: &random),
                    rc: Int.random(in: -5...300, using: &random)
                )
                : nil
        )
    }
}

/// Random CBOR values and alternative (non-deterministic but valid) encodings of them.
enum RandomCBOR {
    static func value(depth: Int, using random: inout TestBytes.SeededGenerator) -> CBOR {
        // Containers half the time while depth remains, so values nest.
        let container = depth > 0 && Bool.random(using: &random)
        switch container ? Int.random(in: 10...12, using: &random) : Int.random(in: 0...9, using: &random) {
        case 0: return .unsignedInt(integer(using: &random))
        case 1: return .negativeInt(integer(using: &random))
        case 2: return .byteString(Data(bytes(using: &random)))
        case 3: return .textString(text(using: &random))
        case 4: return .boolean(Bool.random(using: &random))
        case 5: return Bool.random(using: &random) ? .null : .undefined
        case 6:
            // Simple values other than false/true/null/undefined and the reserved 24...31.
            let value = UInt8.random(in: 0...235, using: &random)
            return .simple(value < 20 ? value : value + 12)
        case 7, 8: return .float(float(using: &random))
        case 9: return .unsignedInt(UInt64.random(in: 0...30, using: &random))
        case 10:
            return .array(
                (0..<Int.random(in: 0...4, using: &random)).map { _ in value(depth: depth - 1, using: &random) }
            )
        case 11:
            var map = CBORMap()
            var keys: Set<CBOR> = []
            for _ in 0..<Int.random(in: 0...4, using: &random) {
                let key =
                    Bool.random(using: &random) ? .textString(text(using: &random)) : value(depth: 0, using: &random)
                guard keys.insert(key).inserted else { continue }
                map.append(key: key, value: value(depth: depth - 1, using: &random))
            }
            return .map(map)
        default:
            return .tagged(integer(using: &random), value(depth: depth - 1, using: &random))
        }
    }

    /// Integers around every boundary where the encoded width changes.
    static func integer(using random: inout TestBytes.SeededGenerator) -> UInt64 {
        let boundaries: [UInt64] = [0, 23, 24, 255, 256, 65535, 65536, 0xffff_ffff, 0x1_0000_0000, .max]
        switch Int.random(in: 0...2, using: &random) {
        case 0: return boundaries.randomElement(using: &random)!
        case 1: return UInt64.random(in: 0...1000, using: &random)
        default: return random.next() >> Int.random(in: 0...63, using: &random)
        }
    }

    static func bytes(using random: inout TestBytes.SeededGenerator) -> [UInt8] {
        let count = [0, 1, 23, 24, 25, Int.random(in: 0...300, using: &random)].randomElement(using: &random)!
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
    }

    static func text(using random: inout TestBytes.SeededGenerator) -> String {
        let count = Int.random(in: 0...30, using: &random)
        var scalars = String.UnicodeScalarView()
        for _ in 0..<count {
            let ranges: [ClosedRange<UInt32>] = [
                0x20...0x7e, 0...0x7f, 0x80...0x7ff, 0x800...0xd7ff, 0xe000...0xffff,
                0x1_0000...0x10_ffff,
            ]
            let range = ranges.randomElement(using: &random)!
            scalars.append(Unicode.Scalar(UInt32.random(in: range, using: &random))!)
        }
        return String(scalars)
    }

    /// Floats of every width, including ±0, infinities, NaN and subnormals; never NaN payloads
    /// (the value is compared by bit pattern).
    static func float(using random: inout TestBytes.SeededGenerator) -> CBORFloat {
        switch Int.random(in: 0...3, using: &random) {
        case 0:
            let specials: [Double] = [0, -0.0, .infinity, -.infinity, .nan, 1, -2, 65504, 5.960464477539063e-8]
            return CBORFloat(specials.randomElement(using: &random)!, width: .half)
        case 1:
            var bits = UInt16.random(in: 0 ... .max, using: &random)
            if bits & 0x7c00 == 0x7c00 { bits &= 0xfc00 }  // infinity instead of a NaN payload
            return CBORFloat(halfToDouble(bits), width: .half)
        case 2:
            var float = Float(bitPattern: UInt32.random(in: 0 ... .max, using: &random))
            if float.isNaN { float = .infinity }
            return CBORFloat(Double(float), width: .single)
        default:
            var double = Double(bitPattern: random.next())
            if double.isNaN { double = -.infinity }
            return CBORFloat(double, width: .double)
        }
    }

    static func halfToDouble(_ bits: UInt16) -> Double {
        let sign: Double = bits & 0x8000 != 0 ? -1 : 1
        let exponent = Int(bits >> 10) & 0x1f
        let mantissa = Double(bits & 0x3ff)
        switch exponent {
        case 0: return sign * mantissa * 0x1p-24
        case 31: return sign * .infinity
        default: return sign * (1024 + mantissa) * Double(sign: .plus, exponent: exponent - 25, significand: 1)
        }
    }

    /// The same value with every map's entries in a random order.
    static func shufflingMaps(_ value: CBOR, using random: inout TestBytes.SeededGenerator) -> CBOR {
        switch value {
        case .array(let items): return .array(items.map { shufflingMaps($0, using: &random) })
        case .map(let map):
            var entries = map.entries.map { CBORMap.Entry(key: $0.key, value: shufflingMaps($0.value, using: &random)) }
            entries.shuffle(using: &random)
            return .map(CBORMap(entries))
        case .tagged(let tag, let item): return .tagged(tag, shufflingMaps(item, using: &random))
        default: return value
        }
    }

    /// A valid encoding that is not the deterministic one: indefinite-length arrays, maps and
    /// (chunked) strings, and arguments in longer forms than needed.
    static func looseEncoding(_ value: CBOR, using random: inout TestBytes.SeededGenerator) -> [UInt8] {
        func head(_ major: UInt8, _ argument: UInt64) -> [UInt8] {
            let minimum: Int =
                argument < 24 ? 0 : argument <= 0xff ? 1 : argument <= 0xffff ? 2 : argument <= 0xffff_ffff ? 3 : 4
            let form = Int.random(in: minimum...4, using: &random)
            switch form {
            case 0: return [major << 5 | UInt8(argument)]
            default:
                let size = 1 << (form - 1)
                return [major << 5 | UInt8(23 + form)]
                    + (0..<size).reversed().map { UInt8(truncatingIfNeeded: argument >> ($0 * 8)) }
            }
        }
        func chunks(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
            var out: [ArraySlice<UInt8>] = []
            var start = 0
            while start < bytes.count || (out.isEmpty && Bool.random(using: &random)) {
                let end = min(bytes.count, start + Int.random(in: 0...8, using: &random))
                out.append(bytes[start..<end])
                start = end
                if bytes.isEmpty { break }
            }
            return out
        }
        let indefinite = Int.random(in: 0...2, using: &random) == 0
        switch value {
        case .unsignedInt(let n): return head(0, n)
        case .negativeInt(let n): return head(1, n)
        case .byteString(let data):
            guard indefinite else { return head(2, UInt64(data.count)) + data }
            return [0x5f] + chunks(Array(data)).flatMap { head(2, UInt64($0.count)) + $0 } + [0xff]
        case .textString(let text):
            let utf8 = Array(text.utf8)
            guard indefinite else { return head(3, UInt64(utf8.count)) + utf8 }
            // Chunks must each be valid UTF-8: cut between scalars.
            var out: [UInt8] = [0x7f]
            var scalars = Array(text.unicodeScalars)[...]
            while !scalars.isEmpty {
                let take = Int.random(in: 1...max(1, scalars.count), using: &random)
                let piece = Array(String(String.UnicodeScalarView(scalars.prefix(take))).utf8)
                out += head(3, UInt64(piece.count)) + piece
                scalars = scalars.dropFirst(take)
            }
            return out + [0xff]
        case .array(let items):
            let body = items.flatMap { looseEncoding($0, using: &random) }
            return indefinite ? [0x9f] + body + [0xff] : head(4, UInt64(items.count)) + body
        case .map(let map):
            let body = map.entries.flatMap {
                looseEncoding($0.key, using: &random) + looseEncoding($0.value, using: &random)
            }
            return indefinite ? [0xbf] + body + [0xff] : head(5, UInt64(map.count)) + body
        case .tagged(let tag, let item): return head(6, tag) + looseEncoding(item, using: &random)
        default: return CBORWriter.encode(value)
        }
    }

    /// Whether every map in a deterministic encoding lists its keys in the requested order.
    static func mapKeysAreSorted(_ bytes: [UInt8], order: CBORWriter.Options.MapKeyOrder) -> Bool {
        guard let value = try? CBORReader.decode(bytes) else { return false }
        func sorted(_ value: CBOR) -> Bool {
            switch value {
            case .array(let items): return items.allSatisfy(sorted)
            case .tagged(_, let item): return sorted(item)
            case .map(let map):
                let keys = map.entries.map { CBORWriter.encode($0.key) }
                for (a, b) in zip(keys, keys.dropFirst()) {
                    if order == .lengthFirst && a.count != b.count {
                        if a.count > b.count { return false }
                    } else if !a.lexicographicallyPrecedes(b) {
                        return false
                    }
                }
                return map.entries.allSatisfy { sorted($0.value) }
            default: return true
            }
        }
        return sorted(value)
    }
}
