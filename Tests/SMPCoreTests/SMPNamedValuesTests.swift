import Foundation
import SMPCBOR
import SMPCore
import SMPTestSupport
import Testing

struct SMPNamedValuesTests {
    @Test func decodingKeepsWireOrderAndEncodingWritesIt() throws {
        let bytes = TestBytes.hex("a3617a01616102616d03")  // {"z": 1, "a": 2, "m": 3}
        let table = try CBORDecoder().decode(SMPNamedValues<Int>.self, from: bytes)
        #expect(table.names == ["z", "a", "m"])
        #expect(try CBOREncoder().encodeToBytes(table) == bytes)
        #expect(
            try CBOREncoder(options: .init(canonical: true)).encodeToBytes(table)
                == TestBytes.hex("a3616102616d03617a01")
        )
    }

    @Test func subscriptReplacesAppendsAndRemoves() {
        var table: SMPNamedValues<Int> = ["a": 1, "b": 2]
        table["a"] = 10
        table["c"] = 3
        table["b"] = nil
        #expect(table.names == ["a", "c"])
        #expect(table.dictionary == ["a": 10, "c": 3])
        #expect(table.map(\.value) == [10, 3])
        #expect(table["missing"] == nil)
    }

    @Test func nonTextKeysAreSkipped() throws {
        let table = try CBORDecoder().decode(SMPNamedValues<Int>.self, from: [1: 5, "x": 6] as CBOR)
        #expect(table.names == ["x"])
    }
}
