import SMPHCI
import Testing

struct BluetoothAddressTests {
    @Test func textIsMostSignificantFirstAndTheWireLeastSignificantFirst() throws {
        let address = try #require(BluetoothAddress("C4:F2:17:1A:1D:BB"))
        #expect(address.littleEndianBytes == [0xBB, 0x1D, 0x1A, 0x17, 0xF2, 0xC4])
        #expect(address.description == "C4:F2:17:1A:1D:BB")
        #expect(BluetoothAddress(littleEndianBytes: address.littleEndianBytes) == address)
        #expect(BluetoothAddress("c4-f2-17-1a-1d-bb") == address)
    }

    @Test(arguments: ["", "C4:F2:17:1A:1D", "C4:F2:17:1A:1D:BB:00", "C4:F2:17:1A:1D:GG", "C4F2:17:1A:1D:BB:0"])
    func rejectsWhatIsNotSixHexPairs(text: String) {
        #expect(BluetoothAddress(text) == nil)
    }

    @Test func wireBytesMustBeSix() {
        #expect(BluetoothAddress(littleEndianBytes: [1, 2, 3, 4, 5]) == nil)
        #expect(BluetoothAddress(littleEndianBytes: [UInt8](repeating: 0, count: 6)) == .zero)
    }

    @Test func addressTypesDescribeThemselves() {
        #expect(LEAddressType.randomDevice.description == "random")
        #expect(LEAddressType(rawValue: 0xFF).description == "0xFF")
    }

    /// A generator that gives the same bytes every time, to reach the excluded all-zero and
    /// all-one addresses.
    struct Repeating: RandomNumberGenerator {
        var values: [UInt64]
        mutating func next() -> UInt64 { values.count > 1 ? values.removeFirst() : values[0] }
    }

    @Test func randomStaticAddressesHaveTheirTopBitsSetAndAreNeverAllZerosOrOnes() {
        var system = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let address = BluetoothAddress.randomStatic(using: &system)
            #expect(address.isStaticRandom)
            #expect(address.littleEndianBytes[5] >= 0xC0)
        }
        // All-zero random part first, then all ones, then a valid one: the first two are skipped.
        var zeros = Repeating(values: Array(repeating: 0, count: 6) + Array(repeating: UInt64.max, count: 6) + [0x42])
        let address = BluetoothAddress.randomStatic(using: &zeros)
        #expect(address.littleEndianBytes != [0, 0, 0, 0, 0, 0xC0])
        #expect(address.littleEndianBytes != [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
        #expect(address.isStaticRandom)
        #expect(!BluetoothAddress.zero.isStaticRandom)
    }
}
