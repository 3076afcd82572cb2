/// The central's way from a new connection to a usable SMP channel, as a pure state machine in
/// the SwiftNIO style: each state carries what has been learnt, each input returns the
/// ``Action`` for the I/O layer; no clock, no I/O.
///
/// The sequence: Exchange MTU (offering 498; the bearer uses the smaller of the two, at least 23)
/// → Find By Type Value for the SMP primary service → Read By Type for the characteristic
/// declarations of its range, continued until "attribute not found" or the range's end, to find
/// the SMP characteristic (it must allow write without response and notify) and where it ends →
/// Find Information over its descriptors to find its CCCD → Write Request CCCD = 0x0001 → ready
/// with a ``GATTClientChannel``.
///
/// One request is outstanding at a time (ATT allows no more). The peer is an ATT client too:
/// its requests are answered as a server without attributes would (its MTU exchange with ours,
/// discovery with "attribute not found") without disturbing the setup. A response when none is
/// awaited, or to another request, is a protocol violation. The I/O layer times every request
/// and calls ``timedOut()`` after 30 s, which fails the setup: ATT then allows no further traffic
/// on the bearer (Core Vol 3 Part F 3.3.3).
public struct GATTClientSetup: Sendable {
    /// What the I/O layer does next.
    public enum Action: Sendable, Hashable {
        /// Send these ATT PDUs (L2CAP payloads on channel 0x0004), in order. When `startsRequest`,
        /// the last one is a new request: start the 30 s transaction timer once it is sent (any
        /// previous request has been answered).
        case send([[UInt8]], startsRequest: Bool)
        /// Nothing to send; a request may still be outstanding (its timer keeps running).
        case none
        /// The setup is done (stop the timer): from now on the channel handles the bearer's PDUs.
        case ready(GATTClientChannel)
        /// The setup failed (stop the timer); disconnect.
        case failed(HCIError)
    }

    /// The SMP characteristic, once its declaration has been read.
    struct Characteristic: Sendable, Hashable {
        var declarationHandle: UInt16
        var properties: GATTCharacteristicProperties
        var valueHandle: UInt16
        /// The last handle of its descriptors, once known.
        var end: UInt16?
    }

    enum State: Sendable {
        case idle
        case exchangingMTU
        case findingService
        /// Reading declarations from `from` to the service's end.
        case discoveringCharacteristics(service: ATTHandleRange, from: UInt16, smp: Characteristic?)
        /// Finding descriptors from `from` to the characteristic's end.
        case discoveringDescriptors(Characteristic, from: UInt16)
        case subscribing(valueHandle: UInt16, cccdHandle: UInt16)
        case ready(GATTClientChannel)
        case failed(HCIError)
    }

    var state: State = .idle
    /// The bearer's ATT_MTU, 23 until an exchange.
    var mtu = ATTServerRole.defaultMTU

    /// Creates the setup of one connection.
    public init() {}

    /// The connection is up: the first request is Exchange MTU.
    /// - Returns: the action; `.none` if the setup has already started.
    public mutating func start() -> Action {
        guard case .idle = state else { return .none }
        state = .exchangingMTU
        return .send(
            [ATTPDU.exchangeMTURequest(clientRxMTU: UInt16(ATTServerRole.preferredMTU)).encoded()],
            startsRequest: true
        )
    }

    /// The request outstanding ran 30 s without an answer.
    /// - Returns: the failure; `.none` if no request was outstanding.
    public mutating func timedOut() -> Action {
        guard let awaited else { return .none }
        return fail(
            HCIError(
                .timeout,
                "the device did not answer the ATT \(awaited) within 30 s; the bearer allows no more requests"
            )
        )
    }

    /// The request whose answer the current state waits for.
    var awaited: ATTOpcode? {
        switch state {
        case .idle, .ready, .failed: nil
        case .exchangingMTU: .exchangeMTURequest
        case .findingService: .findByTypeValueRequest
        case .discoveringCharacteristics: .readByTypeRequest
        case .discoveringDescriptors: .findInformationRequest
        case .subscribing: .writeRequest
        }
    }

    /// A PDU arrived on the ATT channel.
    /// - Parameter attPDU: the payload of an L2CAP PDU on channel 0x0004.
    /// - Returns: the action; `.none` once ready or failed (after ready, give PDUs to the channel).
    public mutating func receive(_ attPDU: [UInt8]) -> Action {
        switch state {
        case .ready, .failed: return .none
        default: break
        }
        let pdu: ATTPDU
        do throws(HCIError) {
            pdu = try ATTPDU(bytes: attPDU)
        } catch {
            if let reply = ATTServerRole.answerUndecodable(attPDU) { return .send([reply], startsRequest: false) }
            // A command the peer sent is ignored, whatever its shape; anything else was for us.
            if let first = attPDU.first, ATTOpcode(rawValue: first).isCommand { return .none }
            return fail(error)
        }
        switch ATTServerRole.answerAsEmptyServer(pdu, mtu: &mtu) {
        case .reply(let reply): return .send([reply], startsRequest: false)
        case .ignore: return .none
        case .notForServer: return receiveAsClient(pdu)
        }
    }

    /// A PDU of the peer's server role.
    private mutating func receiveAsClient(_ pdu: ATTPDU) -> Action {
        switch pdu {
        case .handleValueNotification:
            // Nothing is subscribed yet that the setup would deliver.
            return .none
        case .handleValueIndication:
            return .send([ATTPDU.handleValueConfirmation.encoded()], startsRequest: false)
        default:
            break
        }
        guard let awaited, answers(pdu, awaited) else {
            let expected = awaited.map { "an answer to the \($0)" } ?? "no response"
            return fail(
                HCIError(.protocolViolation, "the device sent an ATT \(pdu.opcode) while expecting \(expected)")
            )
        }
        if case .errorResponse(_, let handle, let error) = pdu { return refused(awaited, handle, error) }
        return answered(pdu)
    }

    /// Whether the PDU is the response (or an Error Response) to the request.
    private func answers(_ pdu: ATTPDU, _ request: ATTOpcode) -> Bool {
        if case .errorResponse(let inError, _, _) = pdu { return inError == request }
        return pdu.opcode.rawValue == request.rawValue + 1
    }

    mutating func fail(_ error: HCIError) -> Action {
        state = .failed(error)
        return .failed(error)
    }

    mutating func request(_ pdu: ATTPDU, in next: State) -> Action {
        state = next
        return .send([pdu.encoded()], startsRequest: true)
    }
}
