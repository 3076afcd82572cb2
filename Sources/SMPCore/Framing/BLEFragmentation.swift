/// Splitting SMP messages into Bluetooth LE writes.
///
/// SMP over GATT has no framing of its own: a message larger than one write is sent as
/// consecutive writes and the receiver reassembles it by the header's length (see
/// ``SMPStreamDecoder``). Without device-side reassembly (`MCUMGR_TRANSPORT_BT_REASSEMBLY`) each
/// request must fit in one write, so the client sizes its messages to the write length.
public enum BLEFragmentation {
    /// The largest ATT payload of one write or notification for an ATT MTU (MTU − 3 bytes of
    /// ATT header).
    /// - Parameter attMTU: the negotiated ATT MTU (23...517).
    /// - Returns: the payload size, at least 20.
    public static func maximumWriteLength(attMTU: Int) -> Int {
        max(20, min(attMTU, 517) - 3)
    }

    /// Splits a message into writes of at most `maximumWriteLength` bytes, in order.
    /// - Parameters:
    ///   - message: the SMP message (header and payload).
    ///   - maximumWriteLength: the largest write, e.g. ``maximumWriteLength(attMTU:)``.
    /// - Returns: the fragments; concatenated they equal `message`.
    public static func fragments(of message: [UInt8], maximumWriteLength: Int) -> [ArraySlice<UInt8>] {
        let size = max(1, maximumWriteLength)
        return stride(from: 0, to: message.count, by: size).map { start in
            message[start..<min(start + size, message.count)]
        }
    }
}
