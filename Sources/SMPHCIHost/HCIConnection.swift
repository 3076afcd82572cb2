import SMPHCI

/// One LE connection of an ``HCIHost``, owned by whoever opened or accepted it: ATT PDUs in,
/// L2CAP PDUs out, and the end of the connection with the controller's reason.
public final class HCIConnection: Sendable {
    /// The host the connection belongs to.
    public let host: HCIHost
    /// The controller's handle for it.
    public let handle: UInt16
    /// Whether we are the central or the peripheral.
    public let role: HCIRole
    /// The peer's address.
    public let peer: BluetoothAddress
    /// The ATT PDUs from the peer, in order; the stream ends with ``HCIDisconnection`` (or the
    /// controller's failure) when the connection does.
    public let attPDUs: AsyncThrowingStream<[UInt8], any Error>

    init(
        host: HCIHost,
        handle: UInt16,
        role: HCIRole,
        peer: BluetoothAddress,
        attPDUs: AsyncThrowingStream<[UInt8], any Error>
    ) {
        self.host = host
        self.handle = handle
        self.role = role
        self.peer = peer
        self.attPDUs = attPDUs
    }

    /// Sends one ATT PDU, queued behind the controller's full buffers if need be.
    /// - Parameter pdu: the ATT PDU.
    /// - Throws: when the connection is gone.
    public func sendATT(_ pdu: [UInt8]) async throws {
        try await host.sendL2CAP(L2CAPPDU(channelID: .att, payload: pdu), handle: handle)
    }

    /// Whether packets are waiting for the controller's buffers.
    public var isBacklogged: Bool {
        get async { await host.aclBacklog > 0 }
    }

    /// Suspends until nothing waits for the controller's buffers.
    /// - Throws: when the connection ends meanwhile.
    public func waitForRoom() async throws {
        try await host.waitForACLRoom(handle: handle)
    }

    /// Ends the connection (Disconnect, reason 0x13); `attPDUs` ends when the controller
    /// confirms.
    public func disconnect() async {
        await host.disconnect(handle)
    }
}
