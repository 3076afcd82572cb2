import Logging
import SMPBytes
import SMPHCI

/// One LE connection as the host keeps it: the L2CAP reassembly of what the peer sends, and the
/// ATT PDUs for the connection's owner.
struct HCIConnectionState {
    let role: HCIRole
    let peer: BluetoothAddress
    /// Bounded by what a peer may send us: ATT PDUs within the 498-byte ATT_MTU both our client
    /// and our server offer, signalling within LE's 23; a longer PDU is dropped when its header
    /// arrives instead of buffering up to 64 KiB per connection for it.
    var reassembler = L2CAPReassembler(maximumPayloadLength: HCIConnectionState.maximumPayloadLength)
    static let maximumPayloadLength = 512
    let attContinuation: AsyncThrowingStream<[UInt8], any Error>.Continuation
    let attInputs: AsyncThrowingStream<[UInt8], any Error>
    var claimed = false
}

/// A connection that ended: the controller's reason, e.g. 0x08 connection timeout (the link was
/// lost), 0x13 remote user terminated, 0x16 local host terminated.
public struct HCIDisconnection: Error, Sendable, Hashable, CustomStringConvertible {
    /// The connection's handle.
    public var connectionHandle: UInt16
    /// Why it ended.
    public var reason: HCIStatus

    public var description: String {
        "the connection (handle 0x\(String(connectionHandle, radix: 16))) ended: \(reason)"
    }
}

extension HCIHost {
    func connectionOpened(handle: UInt16, role: HCIRole, peer: BluetoothAddress) {
        endedConnections[handle] = nil
        let (inputs, continuation) = AsyncThrowingStream.makeStream(of: [UInt8].self, throwing: (any Error).self)
        connections[handle] = HCIConnectionState(
            role: role,
            peer: peer,
            attContinuation: continuation,
            attInputs: inputs
        )
    }

    /// Hands a connection to its owner (once): the ATT PDUs that arrived since it opened wait in
    /// its stream.
    /// - Parameter handle: the connection handle.
    /// - Returns: the connection.
    /// - Throws: ``HCIDisconnection`` or an `HCIError` when it is gone or already claimed.
    func claimConnection(_ handle: UInt16) throws -> HCIConnection {
        guard var state = connections[handle] else {
            throw HCIError(.protocolViolation, "no connection with handle 0x\(String(handle, radix: 16))")
        }
        guard !state.claimed else {
            throw HCIError(.protocolViolation, "the connection 0x\(String(handle, radix: 16)) already has an owner")
        }
        state.claimed = true
        connections[handle] = state
        return HCIConnection(host: self, handle: handle, role: state.role, peer: state.peer, attPDUs: state.attInputs)
    }

    func receiveACL(_ packet: HCIACLDataPacket) {
        let handle = packet.connectionHandle
        guard var state = connections[handle] else { return }
        let pdu: L2CAPPDU?
        do {
            pdu = try state.reassembler.receive(packet)
        } catch {
            // The peer's bytes are wrong, not the link: drop that PDU, keep the connection.
            logger.warning("dropped malformed ACL data", metadata: ["handle": "\(handle)", "error": "\(error)"])
            connections[handle] = state
            return
        }
        connections[handle] = state
        guard let pdu else { return }
        switch pdu.channelID {
        case .att: state.attContinuation.yield(pdu.payload)
        case .leSignalling: answerSignalling(pdu.payload, handle: handle)
        default: logger.debug("ignored an L2CAP PDU", metadata: ["channel": "\(pdu.channelID)"])
        }
    }

    private func answerSignalling(_ payload: [UInt8], handle: UInt16) {
        switch LESignalling.answer(payload) {
        case .reply(let pdu), .acceptUpdate(let pdu, _):
            // An accepted update is not applied with LE Connection Update: controllers may leave
            // it unanswered, and the peer's own controller proposes it again if it matters.
            try? sendL2CAP(pdu, handle: handle)
        case .none: break
        }
    }

    /// Sends an L2CAP PDU: cut to the controller's ACL length, held back while its buffers are full.
    /// - Throws: ``HCIDisconnection`` (or why the controller went away) when the connection is gone.
    func sendL2CAP(_ pdu: L2CAPPDU, handle: UInt16) throws {
        guard connections[handle] != nil else {
            throw whyGone(handle)
        }
        let fragments = pdu.fragments(connectionHandle: handle, maximumDataLength: controller.aclDataPacketLength)
        sendACL(flow.enqueue(fragments))
    }

    /// Whether packets wait for the controller's buffers (the link's back-pressure).
    var aclBacklog: Int { flow.queuedCount }

    func sendACL(_ packets: [HCIACLDataPacket]) {
        for packet in packets {
            do {
                try link.send(.acl(packet))
            } catch {
                controllerEnded(error)
                return
            }
        }
        if flow.queuedCount == 0 { wakeWriters() }
    }

    /// Suspends until no ACL packet waits for the controller's buffers.
    /// - Throws: when the connection ends meanwhile.
    func waitForACLRoom(handle: UInt16) async throws {
        while flow.queuedCount > 0, connections[handle] != nil {
            await withCheckedContinuation { aclWaiters.append($0) }
        }
        guard connections[handle] != nil else {
            throw whyGone(handle)
        }
    }

    /// Why a connection is not there: its own end, the controller's, or a handle never seen.
    private func whyGone(_ handle: UInt16) -> any Error {
        endedConnections[handle] ?? endReason
            ?? HCIError(.protocolViolation, "the connection 0x\(String(handle, radix: 16)) is gone")
    }

    private func wakeWriters() {
        let waiters = aclWaiters
        aclWaiters = []
        for waiter in waiters { waiter.resume() }
    }

    func connectionEnded(_ handle: UInt16, reason: HCIStatus) {
        connectionEnded(handle, cause: HCIDisconnection(connectionHandle: handle, reason: reason))
    }

    func connectionEnded(_ handle: UInt16, cause: any Error) {
        guard let state = connections.removeValue(forKey: handle) else { return }
        endedConnections[handle] = cause
        state.attContinuation.finish(throwing: cause)
        // Packets for a gone connection will never complete: their buffers are the controller's again.
        sendACL(flow.disconnected(connectionHandle: handle))
        wakeWriters()
    }

    /// Asks the controller to end a connection; `HCIConnection/attPDUs` ends when it has.
    /// - Parameter handle: the connection.
    func disconnect(_ handle: UInt16) {
        guard connections[handle] != nil, endReason == nil else { return }
        send(HCICommandPacket(HCI.Disconnect(connectionHandle: handle)))
    }
}
