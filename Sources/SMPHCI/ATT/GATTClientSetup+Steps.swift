/// The steps of ``GATTClientSetup``: each response leads to the next request.
extension GATTClientSetup {
    /// The response to the request outstanding.
    mutating func answered(_ pdu: ATTPDU) -> Action {
        switch (state, pdu) {
        case (.exchangingMTU, .exchangeMTUResponse(let serverRxMTU)):
            mtu = ATTServerRole.effectiveMTU(peer: serverRxMTU)
            return findService()
        case (.findingService, .findByTypeValueResponse(let ranges)):
            // The decoder guarantees at least one range.
            guard let service = ranges.first else { return fail(HCIError(.malformedPacket, "no service range")) }
            return discoverCharacteristics(service: service, from: service.start, smp: nil)
        case (.discoveringCharacteristics(let service, let start, let smp), .readByTypeResponse(let entries)):
            return characteristicsRead(entries, range: ATTHandleRange(start: start, end: service.end), smp: smp)
        case (.discoveringDescriptors(let characteristic, let start), .findInformationResponse(let data)):
            return descriptorsFound(data.entries, characteristic: characteristic, from: start)
        case (.subscribing(let valueHandle, let cccdHandle), .writeResponse):
            let channel = GATTClientChannel(mtu: mtu, valueHandle: valueHandle, cccdHandle: cccdHandle)
            state = .ready(channel)
            return .ready(channel)
        default:
            return fail(HCIError(.protocolViolation, "an ATT \(pdu.opcode) the setup did not expect"))
        }
    }

    /// An Error Response to the request outstanding.
    mutating func refused(_ request: ATTOpcode, _ handle: UInt16, _ error: ATTErrorCode) -> Action {
        switch (state, error) {
        case (.exchangingMTU, _):
            // A server that cannot exchange MTUs keeps the default; the setup goes on.
            return findService()
        case (.findingService, .attributeNotFound):
            return fail(HCIError(.missingAttribute, "the device has no SMP service"))
        case (.discoveringCharacteristics(_, _, let smp), .attributeNotFound):
            return characteristicsDone(smp)
        case (.discoveringDescriptors, .attributeNotFound):
            return noCCCD()
        case (.subscribing, _):
            return fail(
                HCIError(.attributeRequestFailed, "the device refused the subscription: \(error)", attError: error)
            )
        default:
            let what = "the device refused the \(request) (handle 0x\(hex(handle, digits: 4))): \(error)"
            return fail(HCIError(.attributeRequestFailed, what, attError: error))
        }
    }

    private mutating func findService() -> Action {
        request(
            .findByTypeValueRequest(
                .all,
                type: BluetoothUUID.primaryService.shortValue ?? 0x2800,
                value: BluetoothUUID.smpService.littleEndianBytes
            ),
            in: .findingService
        )
    }

    private mutating func discoverCharacteristics(service: ATTHandleRange, from start: UInt16, smp: Characteristic?)
        -> Action
    {
        request(
            .readByTypeRequest(ATTHandleRange(start: start, end: service.end), type: .characteristicDeclaration),
            in: .discoveringCharacteristics(service: service, from: start, smp: smp)
        )
    }

    /// Declarations read: note the SMP characteristic, and where it ends when the next
    /// declaration follows it; go on after the last handle unless that is the service's end.
    private mutating func characteristicsRead(_ entries: [ATTHandleValue], range: ATTHandleRange, smp: Characteristic?)
        -> Action
    {
        guard case .discoveringCharacteristics(let service, _, _) = state else { return .none }
        var smp = smp
        for entry in entries {
            // Handles outside the range asked for could make the discovery go round forever.
            guard range.contains(entry.handle) else {
                let handle = "0x\(hex(entry.handle, digits: 4))"
                return fail(HCIError(.protocolViolation, "a characteristic declaration at \(handle), outside \(range)"))
            }
            if var found = smp, found.end == nil, entry.handle > found.declarationHandle {
                found.end = entry.handle - 1
                return characteristicsDone(found)
            }
            switch Self.declaration(entry, service: service) {
            case .failure(let error): return fail(error)
            case .success(let characteristic?): smp = characteristic
            case .success(nil): break
            }
        }
        // The decoder guarantees at least one entry.
        guard let last = entries.last?.handle, last < service.end else { return characteristicsDone(smp) }
        return discoverCharacteristics(service: service, from: last + 1, smp: smp)
    }

    /// A characteristic declaration's value: the SMP characteristic, `nil` for another.
    private static func declaration(_ entry: ATTHandleValue, service: ATTHandleRange) -> Result<
        Characteristic?, HCIError
    > {
        let value = entry.value
        guard value.count == 5 || value.count == 19 else {
            return .failure(
                HCIError(.malformedPacket, "a characteristic declaration value of \(value.count) bytes, not 5 or 19")
            )
        }
        guard BluetoothUUID(littleEndianBytes: value[3...]) == .smpCharacteristic else { return .success(nil) }
        let valueHandle = UInt16(value[1]) | UInt16(value[2]) << 8
        guard valueHandle > entry.handle, valueHandle <= service.end else {
            return .failure(
                HCIError(
                    .protocolViolation,
                    "the SMP characteristic's value handle 0x\(hex(valueHandle, digits: 4)) is outside its service \(service)"
                )
            )
        }
        let properties = GATTCharacteristicProperties(rawValue: value[0])
        return .success(
            Characteristic(declarationHandle: entry.handle, properties: properties, valueHandle: valueHandle)
        )
    }

    /// Declarations all read: check the SMP characteristic and look for its CCCD.
    private mutating func characteristicsDone(_ smp: Characteristic?) -> Action {
        guard var smp else { return fail(HCIError(.missingAttribute, "the SMP service has no SMP characteristic")) }
        guard smp.properties.contains(.notify) else {
            return fail(HCIError(.missingAttribute, "the SMP characteristic cannot notify"))
        }
        guard smp.properties.contains(.writeWithoutResponse) else {
            return fail(HCIError(.missingAttribute, "the SMP characteristic does not allow write without response"))
        }
        if smp.end == nil, case .discoveringCharacteristics(let service, _, _) = state { smp.end = service.end }
        let end = smp.end ?? smp.valueHandle
        guard smp.valueHandle < end else { return noCCCD() }
        return request(
            .findInformationRequest(ATTHandleRange(start: smp.valueHandle + 1, end: end)),
            in: .discoveringDescriptors(smp, from: smp.valueHandle + 1)
        )
    }

    private mutating func descriptorsFound(
        _ entries: [(handle: UInt16, uuid: BluetoothUUID)],
        characteristic: Characteristic,
        from start: UInt16
    ) -> Action {
        let end = characteristic.end ?? characteristic.valueHandle
        let range = ATTHandleRange(start: start, end: end)
        for entry in entries {
            guard range.contains(entry.handle) else {
                return fail(
                    HCIError(.protocolViolation, "a descriptor at 0x\(hex(entry.handle, digits: 4)), outside \(range)")
                )
            }
            if entry.uuid == .clientCharacteristicConfiguration {
                return request(
                    .writeRequest(handle: entry.handle, value: [0x01, 0x00]),
                    in: .subscribing(valueHandle: characteristic.valueHandle, cccdHandle: entry.handle)
                )
            }
        }
        guard let last = entries.last?.handle, last < end else { return noCCCD() }
        return request(
            .findInformationRequest(ATTHandleRange(start: last + 1, end: end)),
            in: .discoveringDescriptors(characteristic, from: last + 1)
        )
    }

    private mutating func noCCCD() -> Action {
        fail(
            HCIError(.missingAttribute, "the SMP characteristic has no Client Characteristic Configuration descriptor")
        )
    }
}
