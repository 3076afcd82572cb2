import SMPBytes

/// Reads the little-endian fields of an HCI packet's parameters and turns every short read into
/// an ``HCIError`` that names the packet and the field, so no parser has to check lengths itself
/// and none can trap.
struct HCIParameterReader {
    private var reader: ByteReader
    /// The packet being read, for messages (`LE Connection Complete`).
    let packet: String

    init(_ bytes: some Collection<UInt8>, packet: String) {
        self.reader = ByteReader(Array(bytes))
        self.packet = packet
    }

    var readableBytes: Int { reader.readableBytes }

    private func short(_ field: String, needs count: Int) -> HCIError {
        HCIError(
            .malformedPacket,
            "\(packet): \(field) needs \(count) bytes at offset \(reader.readerIndex), "
                + "\(reader.readableBytes) left of \(reader.bytes.count)"
        )
    }

    mutating func readUInt8(_ field: String) throws(HCIError) -> UInt8 {
        guard let value = reader.readByte() else { throw short(field, needs: 1) }
        return value
    }

    mutating func readInt8(_ field: String) throws(HCIError) -> Int8 {
        Int8(bitPattern: try readUInt8(field))
    }

    mutating func readUInt16(_ field: String) throws(HCIError) -> UInt16 {
        guard let value = reader.readInteger(endianness: .little, as: UInt16.self) else {
            throw short(field, needs: 2)
        }
        return value
    }

    mutating func readUInt64(_ field: String) throws(HCIError) -> UInt64 {
        guard let value = reader.readInteger(endianness: .little, as: UInt64.self) else {
            throw short(field, needs: 8)
        }
        return value
    }

    mutating func readBytes(_ field: String, count: Int) throws(HCIError) -> [UInt8] {
        guard let bytes = reader.readBytes(count: count) else { throw short(field, needs: count) }
        return Array(bytes)
    }

    mutating func readAddress(_ field: String) throws(HCIError) -> BluetoothAddress {
        BluetoothAddress(uncheckedLittleEndian: try readBytes(field, count: 6))
    }

    /// Everything not yet read.
    mutating func readRest() -> [UInt8] {
        Array(reader.readBytes(count: reader.readableBytes) ?? [])
    }

    /// Fails when bytes are left: for commands, whose parameters are exactly what this host wrote.
    /// (Events and return parameters may grow at the end in later versions of the specification,
    /// so their parsers ignore what follows the fields they know.)
    func expectEnd() throws(HCIError) {
        guard reader.readableBytes == 0 else {
            throw HCIError(
                .malformedPacket,
                "\(packet): \(reader.readableBytes) unexpected bytes after the parameters at offset \(reader.readerIndex)"
            )
        }
    }
}

extension ByteWriter {
    /// Appends an address in its wire order (least significant byte first).
    mutating func writeAddress(_ address: BluetoothAddress) {
        writeBytes(address.littleEndianBytes)
    }
}
