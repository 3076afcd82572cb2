import SMPHCI
import Testing

/// A peer with a database given as declarations, for the setup's failures.
struct ScriptedPeer {
    var service: ATTHandleRange? = ATTHandleRange(start: 0x0010, end: 0x0015)
    /// Characteristic declarations: handle and value.
    var declarations: [ATTHandleValue] = [
        ATTHandleValue(handle: 0x0011, value: [0x14, 0x12, 0x00] + BluetoothUUID.smpCharacteristic.littleEndianBytes)
    ]
    /// Descriptors: handle and 16-bit UUID.
    var descriptors: [ATTHandleUUID16] = [ATTHandleUUID16(handle: 0x0013, uuid: 0x2902)]
    /// What a CCCD write gets.
    var subscription: ATTErrorCode?
    /// Entries per response, to force continuations.
    var perResponse = 1

    func answer(_ request: ATTPDU) -> [UInt8]? {
        let pdu: ATTPDU
        switch request {
        case .exchangeMTURequest: pdu = .exchangeMTUResponse(serverRxMTU: 247)
        case .findByTypeValueRequest(let range, _, _):
            pdu = service.map { .findByTypeValueResponse([$0]) } ?? notFound(request, range)
        case .readByTypeRequest(let range, _):
            let found = declarations.filter { range.contains($0.handle) }.prefix(perResponse)
            pdu = found.isEmpty ? notFound(request, range) : .readByTypeResponse(Array(found))
        case .findInformationRequest(let range):
            let found = descriptors.filter { range.contains($0.handle) }.prefix(perResponse)
            pdu = found.isEmpty ? notFound(request, range) : .findInformationResponse(.uuid16(Array(found)))
        case .writeRequest(let handle, _):
            pdu =
                subscription.map { .errorResponse(request: .writeRequest, handle: handle, error: $0) } ?? .writeResponse
        default: return nil
        }
        return pdu.encoded()
    }

    func notFound(_ request: ATTPDU, _ range: ATTHandleRange) -> ATTPDU {
        .errorResponse(request: request.opcode, handle: range.start, error: .attributeNotFound)
    }
}

struct GATTClientSetupStepsTests {
    static let smp = BluetoothUUID.smpCharacteristic.littleEndianBytes

    static func run(_ peer: ScriptedPeer) throws -> (GATTClientSetup.Action, [ATTPDU]) {
        var setup = GATTClientSetup()
        return try runSetup(&setup, peer: peer.answer)
    }

    @Test func continuesDiscoveryUntilTheNextDeclarationAndFindsTheCCCDAmongDescriptors() throws {
        var peer = ScriptedPeer()
        peer.service = ATTHandleRange(start: 0x0010, end: 0x0020)
        peer.declarations = [
            ATTHandleValue(handle: 0x0011, value: [0x02, 0x12, 0x00, 0x00, 0x2A]),
            ATTHandleValue(handle: 0x0013, value: [0x1C, 0x14, 0x00] + Self.smp),
            ATTHandleValue(handle: 0x0018, value: [0x02, 0x19, 0x00, 0x01, 0x2A]),
        ]
        peer.descriptors = [
            ATTHandleUUID16(handle: 0x0015, uuid: 0x2901), ATTHandleUUID16(handle: 0x0016, uuid: 0x2902),
        ]
        let (action, requests) = try Self.run(peer)
        #expect(action == .ready(GATTClientChannel(mtu: 247, valueHandle: 0x0014, cccdHandle: 0x0016)))
        #expect(
            Array(requests.dropFirst(2)) == [
                .readByTypeRequest(ATTHandleRange(start: 0x0010, end: 0x0020), type: .characteristicDeclaration),
                .readByTypeRequest(ATTHandleRange(start: 0x0012, end: 0x0020), type: .characteristicDeclaration),
                .readByTypeRequest(ATTHandleRange(start: 0x0014, end: 0x0020), type: .characteristicDeclaration),
                .findInformationRequest(ATTHandleRange(start: 0x0015, end: 0x0017)),
                .findInformationRequest(ATTHandleRange(start: 0x0016, end: 0x0017)),
                .writeRequest(handle: 0x0016, value: [0x01, 0x00]),
            ]
        )
    }

    /// Databases the setup cannot use, and the words of its failure.
    static let failures: [(String, @Sendable (inout ScriptedPeer) -> Void, HCIError.Code, String)] = [
        ("no service", { $0.service = nil }, .missingAttribute, "the device has no SMP service"),
        ("no characteristic", { $0.declarations = [] }, .missingAttribute, "the SMP service has no SMP characteristic"),
        (
            "other characteristic",
            { $0.declarations = [ATTHandleValue(handle: 0x11, value: [0x14, 0x12, 0x00, 0x00, 0x2A])] },
            .missingAttribute, "the SMP service has no SMP characteristic"
        ),
        (
            "no notify", { $0.declarations = [ATTHandleValue(handle: 0x11, value: [0x04, 0x12, 0x00] + smp)] },
            .missingAttribute, "the SMP characteristic cannot notify"
        ),
        (
            "no write without response",
            { $0.declarations = [ATTHandleValue(handle: 0x11, value: [0x18, 0x12, 0x00] + smp)] },
            .missingAttribute, "the SMP characteristic does not allow write without response"
        ),
        (
            "no CCCD", { $0.descriptors = [ATTHandleUUID16(handle: 0x13, uuid: 0x2901)] }, .missingAttribute,
            "no Client Characteristic Configuration"
        ),
        (
            "value at the service's end",
            { $0.declarations = [ATTHandleValue(handle: 0x14, value: [0x14, 0x15, 0x00] + smp)] },
            .missingAttribute, "no Client Characteristic Configuration"
        ),
        (
            "refused subscription", { $0.subscription = .insufficientAuthentication }, .attributeRequestFailed,
            "the device refused the subscription: insufficient authentication (0x05)"
        ),
        (
            "value handle outside",
            { $0.declarations = [ATTHandleValue(handle: 0x11, value: [0x14, 0x30, 0x00] + smp)] },
            .protocolViolation, "outside its service"
        ),
        (
            "declaration of 6 bytes",
            { $0.declarations = [ATTHandleValue(handle: 0x11, value: [0x14, 0x12, 0x00, 0, 0, 0])] },
            .malformedPacket, "6 bytes, not 5 or 19"
        ),
    ]

    @Test(arguments: failures)
    func failsClearly(what: String, change: @Sendable (inout ScriptedPeer) -> Void, code: HCIError.Code, words: String)
        throws
    {
        var peer = ScriptedPeer()
        change(&peer)
        let (action, _) = try Self.run(peer)
        guard case .failed(let error) = action else {
            Issue.record("\(what): not a failure: \(action)")
            return
        }
        #expect(error.code == code, "\(what)")
        #expect(error.message.contains(words), "\(what): \(error.message)")
        if code == .attributeRequestFailed { #expect(error.attError == .insufficientAuthentication) }
    }

    @Test func aDiscoveryErrorOtherThanNotFoundNamesTheRequestAndTheError() throws {
        var setup = GATTClientSetup()
        _ = setup.start()
        _ = setup.receive(ATTPDU.exchangeMTUResponse(serverRxMTU: 247).encoded())
        let refusal = ATTPDU.errorResponse(request: .findByTypeValueRequest, handle: 1, error: .insufficientEncryption)
        guard case .failed(let error) = setup.receive(refusal.encoded()) else {
            Issue.record("not a failure")
            return
        }
        #expect(error.code == .attributeRequestFailed)
        #expect(error.attError == .insufficientEncryption)
        #expect(
            error.message.contains("Find By Type Value Request") && error.message.contains("insufficient encryption")
        )
    }

    /// PDUs that are no answer to the request outstanding (Exchange MTU's).
    static let unexpected: [[UInt8]] = [
        ATTPDU.writeResponse.encoded(),
        ATTPDU.readByTypeResponse([ATTHandleValue(handle: 2, value: [1])]).encoded(),
        ATTPDU.errorResponse(request: .readRequest, handle: 3, error: .invalidHandle).encoded(),
        ATTPDU.handleValueConfirmation.encoded(),
        [0x0F, 0x01],
    ]

    @Test(arguments: unexpected)
    func aResponseToNoRequestOrAnotherIsAProtocolViolation(pdu: [UInt8]) {
        var before = GATTClientSetup()
        #expect(before.receive(pdu) == .failed(HCIError(.protocolViolation)))
        var setup = GATTClientSetup()
        _ = setup.start()
        #expect(setup.receive(pdu) == .failed(HCIError(.protocolViolation)))
    }

    @Test func aMalformedResponseFailsTheSetup() {
        var setup = GATTClientSetup()
        _ = setup.start()
        #expect(setup.receive([0x03, 0xF2]) == .failed(HCIError(.malformedPacket)))
    }

    @Test func declarationsOutsideTheRangeAskedForAreAProtocolViolation() {
        var setup = GATTClientSetup()
        _ = setup.start()
        _ = setup.receive(ATTPDU.exchangeMTUResponse(serverRxMTU: 247).encoded())
        _ = setup.receive(ATTPDU.findByTypeValueResponse([ATTHandleRange(start: 0x10, end: 0x15)]).encoded())
        let outside = ATTPDU.readByTypeResponse([ATTHandleValue(handle: 0x0F, value: [0x14, 0x12, 0x00, 0x00, 0x2A])])
        #expect(setup.receive(outside.encoded()) == .failed(HCIError(.protocolViolation)))
    }
}
