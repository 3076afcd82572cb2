import Foundation
import SMPCBOR
import SMPTestSupport
import Testing

/// Round trips of random values against the Python `cbor2` package, in both directions.
@Suite(Peers.needed("cbor2"))
struct CBORInteropTests {
    /// Random values drawn from what both codecs represent identically: integers over the full
    /// 64-bit ranges, double-width floats (cbor2 writes Python floats as doubles), byte and text
    /// strings (non-ASCII included), arrays, maps with text, integer or byte keys, tags that cbor2
    /// does not interpret, simple values, null, undefined and Booleans.
    static func randomValue(_ g: inout TestBytes.SeededGenerator, depth: Int = 0) -> CBOR {
        let leafOnly = depth >= 4
        switch Int.random(in: 0..<(leafOnly ? 9 : 12), using: &g) {
        case 0: return .unsignedInt(randomMagnitude(&g))
        case 1: return .negativeInt(randomMagnitude(&g))
        case 2:
            return .float(
                CBORFloat(Double(bitPattern: g.next()).isNaN ? 0.25 : Double(bitPattern: g.next()), width: .double)
            )
        case 3:
            return .byteString(
                Data((0..<Int.random(in: 0...40, using: &g)).map { _ in UInt8.random(in: 0...255, using: &g) })
            )
        case 4: return .textString(randomText(&g))
        case 5: return .boolean(Bool.random(using: &g))
        case 6: return [.null, .undefined][Int.random(in: 0...1, using: &g)]
        case 7: return .simple([0, 7, 19, 32, 99, 255][Int.random(in: 0..<6, using: &g)])
        case 8: return CBOR(Int64.random(in: -30...30, using: &g))
        case 9:
            return .array((0..<Int.random(in: 0...6, using: &g)).map { _ in randomValue(&g, depth: depth + 1) })
        case 10:
            var map = CBORMap()
            for _ in 0..<Int.random(in: 0...6, using: &g) {
                let key: CBOR
                switch Int.random(in: 0..<3, using: &g) {
                case 0: key = .textString(randomText(&g))
                case 1: key = CBOR(Int64.random(in: -1000...1000, using: &g))
                default:
                    key = .byteString(
                        Data((0..<Int.random(in: 0...4, using: &g)).map { _ in UInt8.random(in: 0...255, using: &g) })
                    )
                }
                if map[key] == nil { map.append(key: key, value: randomValue(&g, depth: depth + 1)) }
            }
            return .map(map)
        default:
            return .tagged(UInt64.random(in: 1000...100_000, using: &g), randomValue(&g, depth: depth + 1))
        }
    }

    static func randomMagnitude(_ g: inout TestBytes.SeededGenerator) -> UInt64 {
        // Spread over every head width: 0..<24, 1, 2, 4 and 8 byte arguments.
        let bits = [4, 8, 16, 32, 64][Int.random(in: 0..<5, using: &g)]
        return bits == 64 ? g.next() : UInt64.random(in: 0..<(1 << UInt64(bits)), using: &g)
    }

    static func randomText(_ g: inout TestBytes.SeededGenerator) -> String {
        let alphabet = Array("abcXYZ019 _-ü水€𐅑\"\\\n")
        return String(
            (0..<Int.random(in: 0...12, using: &g)).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &g)] }
        )
    }

    @Test func cbor2DecodesAndReencodesOurBytesIdentically() async throws {
        var g = TestBytes.SeededGenerator(seed: 8949)
        let encoded = (0..<500).map { _ in CBORWriter.encode(Self.randomValue(&g)) }
        let script = """
            import sys, cbor2
            for line in sys.stdin.read().split():
                print(cbor2.dumps(cbor2.loads(bytes.fromhex(line))).hex())
            """
        let output = try await Peers.python(
            script,
            stdin: Data(encoded.map { TestBytes.hex($0) }.joined(separator: "\n").utf8)
        )
        let lines = String(decoding: output, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(lines.count == encoded.count)
        for (ours, theirs) in zip(encoded, lines) {
            #expect(TestBytes.hex(ours) == theirs)
        }
    }

    @Test func weDecodeAndReencodeCbor2BytesIdentically() async throws {
        let script = """
            import random, sys, cbor2
            rnd = random.Random(4949)
            def value(depth=0):
                kinds = 9 if depth >= 4 else 12
                k = rnd.randrange(kinds)
                if k == 0: return rnd.randrange(0, 2**64)
                if k == 1: return -rnd.randrange(1, 2**64 + 1)
                if k == 2: return rnd.choice([0.0, -0.0, 1.5, 1.1, 1e300, -4.1, float('inf'), 3.4028234663852886e+38])
                if k == 3: return bytes(rnd.randrange(256) for _ in range(rnd.randrange(0, 40)))
                if k == 4: return ''.join(rnd.choice('abcü水€𐅑"\\\\\\n') for _ in range(rnd.randrange(0, 12)))
                if k == 5: return rnd.choice([True, False, None, cbor2.undefined])
                if k == 6: return rnd.randrange(-2**31, 2**31)
                if k == 7: return cbor2.CBORSimpleValue(rnd.choice([0, 7, 19, 32, 99, 255]))
                if k == 8: return rnd.randrange(-30, 30)
                if k == 9: return [value(depth + 1) for _ in range(rnd.randrange(0, 6))]
                if k == 10: return {rnd.choice([rnd.randrange(-999, 999), 'k%d' % rnd.randrange(99)]): value(depth + 1) for _ in range(rnd.randrange(0, 6))}
                return cbor2.CBORTag(rnd.randrange(1000, 100000), value(depth + 1))
            for _ in range(500):
                print(cbor2.dumps(value()).hex())
            """
        let output = try await Peers.python(script)
        let lines = String(decoding: output, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(lines.count == 500)
        for line in lines {
            let bytes = TestBytes.hex(line)
            let value = try CBORReader.decode(bytes)
            #expect(TestBytes.hex(CBORWriter.encode(value)) == line)
        }
    }

    @Test func canonicalOutputMatchesCbor2Canonical() async throws {
        var g = TestBytes.SeededGenerator(seed: 42)
        let values = (0..<300).map { _ in Self.randomValue(&g) }
        let script = """
            import sys, cbor2
            for line in sys.stdin.read().split():
                print(cbor2.dumps(cbor2.loads(bytes.fromhex(line)), canonical=True).hex())
            """
        let input = values.map { TestBytes.hex(CBORWriter.encode($0)) }.joined(separator: "\n")
        let output = try await Peers.python(script, stdin: Data(input.utf8))
        let lines = String(decoding: output, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(lines.count == values.count)
        for (value, theirs) in zip(values, lines) {
            // cbor2's canonical mode also shortens floats; apply the same preferred widths on our side.
            #expect(
                TestBytes.hex(CBORWriter.encode(value.preferringShortFloats, options: .init(mapKeyOrder: .lengthFirst)))
                    == theirs
            )
        }
    }
}

extension CBOR {
    /// The same value with every float in its preferred (shortest exact) width.
    var preferringShortFloats: CBOR {
        switch self {
        case .float(let f): .float(CBORFloat(f.value))
        case .array(let elements): .array(elements.map(\.preferringShortFloats))
        case .map(let map):
            .map(
                CBORMap(
                    map.entries.map {
                        CBORMap.Entry(key: $0.key.preferringShortFloats, value: $0.value.preferringShortFloats)
                    }
                )
            )
        case .tagged(let tag, let item): .tagged(tag, item.preferringShortFloats)
        default: self
        }
    }
}
