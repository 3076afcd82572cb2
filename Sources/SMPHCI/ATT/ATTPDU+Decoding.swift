extension ATTPDU {
    /// Decodes a PDU.
    /// - Parameter bytes: an L2CAP payload of the ATT channel: opcode, then parameters.
    /// - Throws: ``HCIError`` `.malformedPacket` when the bytes are not a valid PDU of their
    ///   opcode: empty, truncated or longer than the PDU's fixed size, a handle of 0x0000, a range
    ///   that starts at 0 or after its end, a list whose length does not divide into entries, a
    ///   response with no entries, a Find Information format other than 1 or 2. An opcode without
    ///   a case decodes to ``unknown(_:_:)`` whatever follows it.
    public init(bytes: some Collection<UInt8>) throws(HCIError) {
        guard let first = bytes.first else { throw HCIError(.malformedPacket, "ATT PDU: no opcode") }
        let opcode = ATTOpcode(rawValue: first)
        var reader = HCIParameterReader(bytes.dropFirst(), packet: "ATT \(opcode)")
        switch opcode {
        case .errorResponse:
            self = .errorResponse(
                request: ATTOpcode(rawValue: try reader.readUInt8("Request Opcode In Error")),
                handle: try reader.readUInt16("Attribute Handle In Error"),
                error: ATTErrorCode(rawValue: try reader.readUInt8("Error Code"))
            )
        case .exchangeMTURequest: self = .exchangeMTURequest(clientRxMTU: try reader.readUInt16("Client Rx MTU"))
        case .exchangeMTUResponse: self = .exchangeMTUResponse(serverRxMTU: try reader.readUInt16("Server Rx MTU"))
        case .findInformationRequest: self = .findInformationRequest(try reader.readRange())
        case .findInformationResponse: self = .findInformationResponse(try reader.readFindInformation())
        case .findByTypeValueRequest:
            self = .findByTypeValueRequest(
                try reader.readRange(),
                type: try reader.readUInt16("Attribute Type"),
                value: reader.readRest()
            )
        case .findByTypeValueResponse: self = .findByTypeValueResponse(try reader.readHandlesInformation())
        case .readByTypeRequest: self = .readByTypeRequest(try reader.readRange(), type: try reader.readUUIDType())
        case .readByTypeResponse: self = .readByTypeResponse(try reader.readHandleValues())
        case .readByGroupTypeRequest:
            self = .readByGroupTypeRequest(try reader.readRange(), type: try reader.readUUIDType())
        case .readByGroupTypeResponse: self = .readByGroupTypeResponse(try reader.readGroupValues())
        default:
            self = try Self.decodeSimple(opcode, &reader)
        }
        try reader.expectEnd()
    }

    /// The PDUs made of a handle, a value, an offset, or nothing.
    private static func decodeSimple(_ opcode: ATTOpcode, _ reader: inout HCIParameterReader) throws(HCIError) -> Self {
        switch opcode {
        case .readRequest: return .readRequest(handle: try reader.readHandle("Attribute Handle"))
        case .readResponse: return .readResponse(value: reader.readRest())
        case .readBlobRequest:
            return .readBlobRequest(
                handle: try reader.readHandle("Attribute Handle"),
                offset: try reader.readUInt16("Value Offset")
            )
        case .readBlobResponse: return .readBlobResponse(value: reader.readRest())
        case .writeRequest:
            return .writeRequest(handle: try reader.readHandle("Attribute Handle"), value: reader.readRest())
        case .writeResponse: return .writeResponse
        case .writeCommand:
            return .writeCommand(handle: try reader.readHandle("Attribute Handle"), value: reader.readRest())
        case .handleValueNotification:
            return .handleValueNotification(handle: try reader.readHandle("Attribute Handle"), value: reader.readRest())
        case .handleValueIndication:
            return .handleValueIndication(handle: try reader.readHandle("Attribute Handle"), value: reader.readRest())
        case .handleValueConfirmation: return .handleValueConfirmation
        default: return .unknown(opcode, reader.readRest())
        }
    }
}

extension HCIParameterReader {
    private func malformed(_ message: String) -> HCIError {
        HCIError(.malformedPacket, "\(packet): \(message)")
    }

    /// A handle that must not be 0x0000, the reserved handle no attribute has.
    mutating func readHandle(_ field: String) throws(HCIError) -> UInt16 {
        let handle = try readUInt16(field)
        guard handle != 0 else { throw malformed("\(field) is 0x0000") }
        return handle
    }

    /// A request's handle range: start ≠ 0, start ≤ end.
    mutating func readRange() throws(HCIError) -> ATTHandleRange {
        let range = ATTHandleRange(start: try readUInt16("Starting Handle"), end: try readUInt16("Ending Handle"))
        guard range.start != 0 else { throw malformed("Starting Handle is 0x0000") }
        guard range.start <= range.end else { throw malformed("Starting Handle after Ending Handle in \(range)") }
        return range
    }

    /// A type that is a 16-bit or a 128-bit UUID (the whole rest of the PDU).
    mutating func readUUIDType() throws(HCIError) -> BluetoothUUID {
        let count = readableBytes
        guard count == 2 || count == 16, let uuid = BluetoothUUID(littleEndianBytes: readRest()) else {
            throw malformed("Attribute Group Type or Type is \(count) bytes, not 2 or 16")
        }
        return uuid
    }

    /// Splits the rest into entries of `size` bytes, at least one.
    private mutating func entries(of size: Int, _ what: String) throws(HCIError) -> [[UInt8]] {
        let count = readableBytes
        guard size > 0, count > 0, count % size == 0 else {
            throw malformed("\(count) bytes of \(what) are not whole entries of \(size) bytes")
        }
        var result: [[UInt8]] = []
        while readableBytes > 0 { result.append(try readBytes(what, count: size)) }
        return result
    }

    /// Reads an entry's handle: not 0x0000, and after the previous entry's.
    private func entryHandle(_ entry: [UInt8], after previous: UInt16?) throws(HCIError) -> UInt16 {
        let handle = UInt16(entry[0]) | UInt16(entry[1]) << 8
        guard handle != 0 else { throw malformed("an entry's handle is 0x0000") }
        if let previous, handle <= previous {
            throw malformed("handle 0x\(hex(handle, digits: 4)) after 0x\(hex(previous, digits: 4)): not ascending")
        }
        return handle
    }

    mutating func readFindInformation() throws(HCIError) -> ATTFindInformationData {
        let format = try readUInt8("Format")
        guard format == 1 || format == 2 else { throw malformed("Format 0x\(hex(format, digits: 2)) is not 1 or 2") }
        let raw = try entries(of: format == 1 ? 4 : 18, "Information Data")
        var handles: [UInt16] = []
        for entry in raw { handles.append(try entryHandle(entry, after: handles.last)) }
        if format == 1 {
            return .uuid16(
                zip(handles, raw).map { ATTHandleUUID16(handle: $0, uuid: UInt16($1[2]) | UInt16($1[3]) << 8) }
            )
        }
        return .uuid128(
            zip(handles, raw).map { handle, entry in
                // 16 bytes always make a UUID.
                ATTHandleUUID128(
                    handle: handle,
                    uuid: BluetoothUUID(littleEndianBytes: entry[2...]) ?? BluetoothUUID(UInt16(0))
                )
            }
        )
    }

    mutating func readHandlesInformation() throws(HCIError) -> [ATTHandleRange] {
        var ranges: [ATTHandleRange] = []
        for entry in try entries(of: 4, "Handles Information List") {
            let found = try entryHandle(entry, after: ranges.last?.end)
            let end = UInt16(entry[2]) | UInt16(entry[3]) << 8
            guard found <= end else { throw malformed("Group End Handle before Found Attribute Handle") }
            ranges.append(ATTHandleRange(start: found, end: end))
        }
        return ranges
    }

    mutating func readHandleValues() throws(HCIError) -> [ATTHandleValue] {
        let length = Int(try readUInt8("Length"))
        guard length >= 2 else { throw malformed("Length \(length) is shorter than a handle") }
        var result: [ATTHandleValue] = []
        for entry in try entries(of: length, "Attribute Data List") {
            let handle = try entryHandle(entry, after: result.last?.handle)
            result.append(ATTHandleValue(handle: handle, value: Array(entry[2...])))
        }
        return result
    }

    mutating func readGroupValues() throws(HCIError) -> [ATTGroupValue] {
        let length = Int(try readUInt8("Length"))
        guard length >= 4 else { throw malformed("Length \(length) is shorter than two handles") }
        var result: [ATTGroupValue] = []
        for entry in try entries(of: length, "Attribute Data List") {
            let start = try entryHandle(entry, after: result.last?.range.end)
            let end = UInt16(entry[2]) | UInt16(entry[3]) << 8
            guard start <= end else { throw malformed("End Group Handle before Attribute Handle") }
            result.append(ATTGroupValue(range: ATTHandleRange(start: start, end: end), value: Array(entry[4...])))
        }
        return result
    }
}
