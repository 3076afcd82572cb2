extension BluetoothUUID {
    /// The SMP service, `8D53DC1D-1DB7-4CD3-868B-8A527460AA84`.
    public static let smpService = BluetoothUUID(littleEndianBytes: smpServiceWire) ?? BluetoothUUID(UInt16(0))
    /// The SMP characteristic, `DA2E7828-FBCE-4E01-AE9E-261174997C48`.
    public static let smpCharacteristic =
        BluetoothUUID(littleEndianBytes: smpCharacteristicWire) ?? BluetoothUUID(UInt16(0))
    /// 0x2800 Primary Service declaration.
    public static let primaryService = BluetoothUUID(UInt16(0x2800))
    /// 0x2801 Secondary Service declaration.
    public static let secondaryService = BluetoothUUID(UInt16(0x2801))
    /// 0x2803 Characteristic declaration.
    public static let characteristicDeclaration = BluetoothUUID(UInt16(0x2803))
    /// 0x2902 Client Characteristic Configuration descriptor.
    public static let clientCharacteristicConfiguration = BluetoothUUID(UInt16(0x2902))

    // Little-endian wire bytes, so the constants need no text parsing.
    private static let smpServiceWire: [UInt8] = [
        0x84, 0xAA, 0x60, 0x74, 0x52, 0x8A, 0x8B, 0x86, 0xD3, 0x4C, 0xB7, 0x1D, 0x1D, 0xDC, 0x53, 0x8D,
    ]
    private static let smpCharacteristicWire: [UInt8] = [
        0x48, 0x7C, 0x99, 0x74, 0x11, 0x26, 0x9E, 0xAE, 0x01, 0x4E, 0xCE, 0xFB, 0x28, 0x78, 0x2E, 0xDA,
    ]

    /// The UUID as an attribute value or a characteristic declaration carries it: 2 bytes when it
    /// has a 16-bit alias, else 16.
    var attributeBytes: [UInt8] {
        shortValue.map { [UInt8(truncatingIfNeeded: $0), UInt8($0 >> 8)] } ?? littleEndianBytes
    }
}

/// Characteristic properties (Core Vol 3 Part G 3.3.1.1), the first byte of a characteristic
/// declaration's value.
public struct GATTCharacteristicProperties: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    /// Creates properties from their bits.
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// 0x02: the value can be read.
    public static let read = GATTCharacteristicProperties(rawValue: 0x02)
    /// 0x04: Write Command.
    public static let writeWithoutResponse = GATTCharacteristicProperties(rawValue: 0x04)
    /// 0x08: Write Request.
    public static let write = GATTCharacteristicProperties(rawValue: 0x08)
    /// 0x10: notifications.
    public static let notify = GATTCharacteristicProperties(rawValue: 0x10)
    /// 0x20: indications.
    public static let indicate = GATTCharacteristicProperties(rawValue: 0x20)
}

/// One attribute of ``GATTServer``'s database.
struct GATTAttribute: Sendable {
    var handle: UInt16
    var type: BluetoothUUID
    /// The value; the CCCD's is the server's state, not this.
    var value: [UInt8]
    var readable: Bool
    var writable: Bool
    /// The last handle of the group a service declaration opens; the handle itself otherwise.
    var groupEnd: UInt16
}

/// The fixed database of ``GATTServer``: GAP (Device Name), GATT, and the SMP service with its
/// characteristic and CCCD, in the handles below.
struct GATTDatabase: Sendable {
    static let deviceNameHandle: UInt16 = 0x0003
    static let smpServiceHandle: UInt16 = 0x0005
    static let smpValueHandle: UInt16 = 0x0007
    static let cccdHandle: UInt16 = 0x0008
    /// What the SMP characteristic allows: Zephyr's write without response and notify, and write.
    static let smpProperties: GATTCharacteristicProperties = [.writeWithoutResponse, .write, .notify]

    let attributes: [GATTAttribute]

    init(deviceName: [UInt8]) {
        func service(_ handle: UInt16, _ uuid: BluetoothUUID, end: UInt16) -> GATTAttribute {
            GATTAttribute(
                handle: handle,
                type: .primaryService,
                value: uuid.attributeBytes,
                readable: true,
                writable: false,
                groupEnd: end
            )
        }
        func declaration(_ handle: UInt16, _ properties: GATTCharacteristicProperties, _ uuid: BluetoothUUID)
            -> GATTAttribute
        {
            let value = [properties.rawValue, UInt8(truncatingIfNeeded: handle + 1), UInt8((handle + 1) >> 8)]
            return GATTAttribute(
                handle: handle,
                type: .characteristicDeclaration,
                value: value + uuid.attributeBytes,
                readable: true,
                writable: false,
                groupEnd: handle
            )
        }
        attributes = [
            service(0x0001, BluetoothUUID(UInt16(0x1800)), end: 0x0003),
            declaration(0x0002, .read, BluetoothUUID(UInt16(0x2A00))),
            GATTAttribute(
                handle: 0x0003,
                type: BluetoothUUID(UInt16(0x2A00)),
                value: deviceName,
                readable: true,
                writable: false,
                groupEnd: 0x0003
            ),
            service(0x0004, BluetoothUUID(UInt16(0x1801)), end: 0x0004),
            service(Self.smpServiceHandle, .smpService, end: Self.cccdHandle),
            declaration(0x0006, Self.smpProperties, .smpCharacteristic),
            GATTAttribute(
                handle: Self.smpValueHandle,
                type: .smpCharacteristic,
                value: [],
                readable: false,
                writable: true,
                groupEnd: Self.smpValueHandle
            ),
            GATTAttribute(
                handle: Self.cccdHandle,
                type: .clientCharacteristicConfiguration,
                value: [0x00, 0x00],
                readable: true,
                writable: true,
                groupEnd: Self.cccdHandle
            ),
        ]
    }

    /// The attribute with the handle, if any.
    func attribute(_ handle: UInt16) -> GATTAttribute? {
        attributes.first { $0.handle == handle }
    }

    /// The attributes whose handles are in the range, in handle order.
    func attributes(in range: ATTHandleRange) -> [GATTAttribute] {
        attributes.filter { range.contains($0.handle) }
    }
}
