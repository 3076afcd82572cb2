/// CRC-16/XMODEM: polynomial 0x1021, initial value 0, no reflection, no final XOR.
///
/// The checksum of SMP-over-console packets (Zephyr's `crc16_itu_t(0, …)`); the check value of
/// ASCII "123456789" is 0x31C3. Running it over a message followed by its big-endian CRC gives 0.
public enum CRC16XMODEM {
    private static let table: [UInt16] = (0..<256).map { index in
        var crc = UInt16(index) << 8
        for _ in 0..<8 { crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1 }
        return crc
    }

    /// Computes the checksum.
    /// - Parameters:
    ///   - bytes: the data.
    ///   - initial: a running value, to continue a checksum over several pieces.
    /// - Returns: the CRC.
    public static func checksum(_ bytes: some Sequence<UInt8>, initial: UInt16 = 0) -> UInt16 {
        var crc = initial
        for byte in bytes { crc = (crc << 8) ^ table[Int((crc >> 8) ^ UInt16(byte))] }
        return crc
    }
}
