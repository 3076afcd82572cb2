import SMPHCI
import Testing

struct BluetoothUUIDTests {
    @Test func shortFormsExpandOnTheBaseUUID() {
        #expect(BluetoothUUID(UInt16(0x180D)).description == "0000180D-0000-1000-8000-00805F9B34FB")
        #expect(BluetoothUUID(UInt16(0x180D)).shortValue == 0x180D)
        #expect(BluetoothUUID(UInt32(0x1234_5678)).description == "12345678-0000-1000-8000-00805F9B34FB")
    }

    @Test func wireBytesAreLeastSignificantFirst() throws {
        let uuid = try #require(BluetoothUUID("8d53dc1d-1db7-4cd3-868b-8a527460aa84"))
        #expect(uuid.description == "8D53DC1D-1DB7-4CD3-868B-8A527460AA84")
        #expect(uuid.littleEndianBytes.first == 0x84)
        #expect(BluetoothUUID(littleEndianBytes: uuid.littleEndianBytes) == uuid)
        #expect(BluetoothUUID(littleEndianBytes: [0x0D, 0x18]) == BluetoothUUID(UInt16(0x180D)))
        #expect(uuid.shortValue == nil)
    }

    @Test(arguments: ["", "8D53DC1D1DB74CD3868B8A527460AA84", "8D53DC1D-1DB7-4CD3-868B-8A527460AA8G"])
    func rejectsWhatIsNotAUUID(text: String) {
        #expect(BluetoothUUID(text) == nil)
    }

    @Test func wireBytesMustBe2Or4Or16() {
        #expect(BluetoothUUID(littleEndianBytes: [1, 2, 3]) == nil)
    }
}
