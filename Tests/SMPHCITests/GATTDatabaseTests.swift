import Testing

@testable import SMPHCI

struct GATTDatabaseTests {
    @Test func theSMPUUIDsAreZephyrs() {
        #expect(BluetoothUUID.smpService == BluetoothUUID("8D53DC1D-1DB7-4CD3-868B-8A527460AA84"))
        #expect(BluetoothUUID.smpCharacteristic == BluetoothUUID("DA2E7828-FBCE-4E01-AE9E-261174997C48"))
        #expect(BluetoothUUID.clientCharacteristicConfiguration.shortValue == 0x2902)
        #expect(BluetoothUUID.characteristicDeclaration.attributeBytes == [0x03, 0x28])
        #expect(BluetoothUUID.smpService.attributeBytes.count == 16)
    }

    @Test func theHandlesAreConsecutiveAndEachServiceEndsBeforeTheNext() {
        let database = GATTDatabase(deviceName: Array("sim".utf8))
        #expect(database.attributes.map(\.handle) == Array(1...8))
        let services = database.attributes.filter { $0.type == .primaryService }
        #expect(services.map(\.handle) == [1, 4, 5])
        #expect(services.map(\.groupEnd) == [3, 4, 8])
        #expect(database.attribute(GATTDatabase.smpValueHandle)?.type == .smpCharacteristic)
        #expect(database.attribute(9) == nil)
        #expect(database.attributes(in: ATTHandleRange(start: 6, end: 7)).map(\.handle) == [6, 7])
    }

    @Test func propertiesAreTheSpecificationsBits() {
        #expect(GATTDatabase.smpProperties.rawValue == 0x1C)
        #expect(GATTCharacteristicProperties([.read, .indicate]).rawValue == 0x22)
    }
}
