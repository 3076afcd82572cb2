/// The read and discovery requests, each answered from the database within the bearer's MTU.
extension GATTServer {
    /// The answer to a request that reads or discovers, or `nil` for PDUs a server ignores.
    func answerRead(_ pdu: ATTPDU) -> [UInt8]? {
        let answer: Result<ATTPDU, ReadError>
        switch pdu {
        case .readByGroupTypeRequest(let range, let type): answer = readByGroupType(range, type)
        case .readByTypeRequest(let range, let type): answer = readByType(range, type)
        case .findInformationRequest(let range): answer = findInformation(range)
        case .findByTypeValueRequest(let range, let type, let value): answer = findByTypeValue(range, type, value)
        case .readRequest(let handle): answer = read(handle, offset: nil)
        case .readBlobRequest(let handle, let offset): answer = read(handle, offset: offset)
        default: return nil
        }
        switch answer {
        case .success(let response): return response.encoded()
        case .failure(let error): return ATTServerRole.error(pdu.opcode, error.handle, error.code)
        }
    }

    /// An Error Response's handle and code.
    struct ReadError: Error {
        var handle: UInt16
        var code: ATTErrorCode
    }

    /// Entries of one value length, as many as fit in `room` bytes of `size(length)` each.
    private func uniform<Entry>(_ entries: [Entry], room: Int, length: (Entry) -> Int, size: (Int) -> Int) -> [Entry] {
        guard let first = entries.first else { return [] }
        let count = max(1, room / size(length(first)))
        return Array(entries.prefix { length($0) == length(first) }.prefix(count))
    }

    func readByGroupType(_ range: ATTHandleRange, _ type: BluetoothUUID) -> Result<ATTPDU, ReadError> {
        guard type == .primaryService || type == .secondaryService else {
            return .failure(ReadError(handle: range.start, code: .unsupportedGroupType))
        }
        let limit = min(mtu - 6, 251)
        let groups = database.attributes(in: range).filter { $0.type == type }.map {
            ATTGroupValue(
                range: ATTHandleRange(start: $0.handle, end: $0.groupEnd),
                value: Array(value(of: $0).prefix(limit))
            )
        }
        guard !groups.isEmpty else { return .failure(ReadError(handle: range.start, code: .attributeNotFound)) }
        return .success(.readByGroupTypeResponse(uniform(groups, room: mtu - 2, length: \.value.count) { 4 + $0 }))
    }

    func readByType(_ range: ATTHandleRange, _ type: BluetoothUUID) -> Result<ATTPDU, ReadError> {
        let found = database.attributes(in: range).filter { $0.type == type }
        guard let first = found.first else { return .failure(ReadError(handle: range.start, code: .attributeNotFound)) }
        guard first.readable else { return .failure(ReadError(handle: first.handle, code: .readNotPermitted)) }
        let limit = min(mtu - 4, 253)
        let entries = found.prefix(while: \.readable).map {
            ATTHandleValue(handle: $0.handle, value: Array(value(of: $0).prefix(limit)))
        }
        return .success(.readByTypeResponse(uniform(entries, room: mtu - 2, length: \.value.count) { 2 + $0 }))
    }

    func findInformation(_ range: ATTHandleRange) -> Result<ATTPDU, ReadError> {
        let found = database.attributes(in: range)
        guard let first = found.first else { return .failure(ReadError(handle: range.start, code: .attributeNotFound)) }
        if first.type.shortValue != nil {
            let entries = found.prefix { $0.type.shortValue != nil }.map {
                ATTHandleUUID16(handle: $0.handle, uuid: $0.type.shortValue ?? 0)
            }
            return .success(.findInformationResponse(.uuid16(Array(entries.prefix((mtu - 2) / 4)))))
        }
        let entries = found.prefix { $0.type.shortValue == nil }.map {
            ATTHandleUUID128(handle: $0.handle, uuid: $0.type)
        }
        return .success(.findInformationResponse(.uuid128(Array(entries.prefix((mtu - 2) / 18)))))
    }

    func findByTypeValue(_ range: ATTHandleRange, _ type: UInt16, _ wanted: [UInt8]) -> Result<ATTPDU, ReadError> {
        let found = database.attributes(in: range).filter { $0.type == BluetoothUUID(type) && value(of: $0) == wanted }
        guard !found.isEmpty else { return .failure(ReadError(handle: range.start, code: .attributeNotFound)) }
        let ranges = found.map { ATTHandleRange(start: $0.handle, end: $0.groupEnd) }
        return .success(.findByTypeValueResponse(Array(ranges.prefix((mtu - 1) / 4))))
    }

    /// Read Request (`offset` nil) and Read Blob Request.
    func read(_ handle: UInt16, offset: UInt16?) -> Result<ATTPDU, ReadError> {
        guard let attribute = database.attribute(handle) else {
            return .failure(ReadError(handle: handle, code: .invalidHandle))
        }
        guard attribute.readable else { return .failure(ReadError(handle: handle, code: .readNotPermitted)) }
        let whole = value(of: attribute)
        guard let offset else { return .success(.readResponse(value: Array(whole.prefix(mtu - 1)))) }
        guard Int(offset) <= whole.count else { return .failure(ReadError(handle: handle, code: .invalidOffset)) }
        return .success(.readBlobResponse(value: Array(whole[Int(offset)...].prefix(mtu - 1))))
    }
}
