import Logging
import SMPBytes
import SMPHCI
import SMPLink

/// The SMP characteristic of a peripheral connected through our own LE host: the same
/// `GATTLink` as BlueZ's and CoreBluetooth's, so the GATT transport core (framing,
/// reassembly, back-pressure) is shared.
public final class HCIGATTLink: GATTLink {
    /// The connection underneath.
    public let connection: HCIConnection
    public let events: AsyncStream<GATTLinkEvent>
    private let channel: Locked<GATTClientChannel>
    private let receiver: Task<Void, Never>

    init(bearer: ATTBearer, channel: GATTClientChannel) {
        connection = bearer.connection
        let state = Locked(channel)
        self.channel = state
        let (events, continuation) = AsyncStream.makeStream(of: GATTLinkEvent.self)
        self.events = events
        receiver = Task {
            await HCIGATTLink.receive(bearer, state, continuation)
        }
    }

    /// Notifications out as events, the peer's requests answered, until the connection ends.
    private static func receive(
        _ bearer: ATTBearer,
        _ channel: Locked<GATTClientChannel>,
        _ continuation: AsyncStream<GATTLinkEvent>.Continuation
    ) async {
        for await input in bearer.inputs.inputs {
            switch input {
            case .input(let pdu):
                do {
                    let output = try channel.withLock { channel throws(HCIError) in try channel.receive(pdu) }
                    if let value = output.value { continuation.yield(.notification(value)) }
                    if let reply = output.reply { try await bearer.send([reply]) }
                } catch let error as HCIError {
                    // One malformed PDU from the peer is dropped; the link goes on.
                    bearer.connection.host.logger.warning("dropped an ATT PDU", metadata: ["error": "\(error)"])
                } catch {
                    continuation.yield(.disconnected(error))
                    continuation.finish()
                    return
                }
            case .timer: break
            case .ended(let error):
                continuation.yield(.disconnected(SMPTransportError(.disconnected, "\(error)", cause: error)))
                continuation.finish()
                return
            }
        }
        continuation.finish()
    }

    public var maximumWriteLength: Int { channel.withLock { $0.maximumWriteLength } }

    public func writeWithoutResponse(_ value: [UInt8]) async throws -> Bool {
        let pdu: [UInt8]
        do {
            pdu = try channel.withLock { channel throws(HCIError) in try channel.writeCommand(value) }
        } catch {
            throw SMPTransportError(.frameTooLarge, "\(error)", cause: error)
        }
        // The controller's buffers are the radio's back-pressure: with packets still waiting
        // for them, say "not now" rather than queue without bound.
        if await connection.isBacklogged { return false }
        do {
            try await connection.sendATT(pdu)
        } catch {
            throw SMPTransportError(.disconnected, "the peripheral disconnected", cause: error)
        }
        return true
    }

    public func waitUntilReadyForWrite() async throws {
        do {
            try await connection.waitForRoom()
        } catch {
            throw SMPTransportError(.disconnected, "the peripheral disconnected", cause: error)
        }
    }

    public func disconnect() async {
        await connection.disconnect()
    }

    deinit { receiver.cancel() }
}
