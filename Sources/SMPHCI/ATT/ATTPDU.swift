import SMPBytes

/// An Attribute Protocol PDU (Core Vol 3 Part F 3.4): the payload of an L2CAP PDU on channel
/// 0x0004 (``L2CAPChannelID/att``), decoded with ``init(bytes:)`` and encoded with
/// ``encoded()``.
///
/// The PDUs an LE client and server of the SMP service exchange have cases of their own; any
/// other opcode (Prepare Write, Read Multiple, Signed Write Command, …) decodes to ``unknown(_:_:)``
/// with its bytes, so a server can answer it with "request not supported" — or ignore it, if it
/// is a command (``ATTOpcode/isCommand``).
public enum ATTPDU: Sendable, Hashable {
    /// 0x01: a request failed. `handle` is the attribute in error (0x0000 when none applies).
    case errorResponse(request: ATTOpcode, handle: UInt16, error: ATTErrorCode)
    /// 0x02: the client's receive MTU.
    case exchangeMTURequest(clientRxMTU: UInt16)
    /// 0x03: the server's receive MTU.
    case exchangeMTUResponse(serverRxMTU: UInt16)
    /// 0x04: the handles and types of the attributes in a range.
    case findInformationRequest(ATTHandleRange)
    /// 0x05: handles and types, in one UUID format.
    case findInformationResponse(ATTFindInformationData)
    /// 0x06: the groups whose declaration of a 16-bit type has a value (a primary service by UUID).
    case findByTypeValueRequest(ATTHandleRange, type: UInt16, value: [UInt8])
    /// 0x07: the groups found: each range is a found attribute's handle and its group's end.
    case findByTypeValueResponse([ATTHandleRange])
    /// 0x08: the values of the attributes of a type in a range. A UUID built on the Bluetooth Base
    /// UUID is sent in 2 bytes, any other in 16.
    case readByTypeRequest(ATTHandleRange, type: BluetoothUUID)
    /// 0x09: handles and values, all of one length: the encoder writes the first entry's length,
    /// so entries of other lengths make bytes that ``init(bytes:)`` rejects.
    case readByTypeResponse([ATTHandleValue])
    /// 0x0A: an attribute's value.
    case readRequest(handle: UInt16)
    /// 0x0B: the value (at most ATT_MTU − 1 bytes of it).
    case readResponse(value: [UInt8])
    /// 0x0C: an attribute's value from an offset.
    case readBlobRequest(handle: UInt16, offset: UInt16)
    /// 0x0D: the value from the offset (at most ATT_MTU − 1 bytes).
    case readBlobResponse(value: [UInt8])
    /// 0x10: the groups of a grouping type (a primary service) in a range. UUIDs as in
    /// ``readByTypeRequest(_:type:)``.
    case readByGroupTypeRequest(ATTHandleRange, type: BluetoothUUID)
    /// 0x11: the groups and their values, all of one length (as in ``readByTypeResponse(_:)``).
    case readByGroupTypeResponse([ATTGroupValue])
    /// 0x12: writes a value, answered by a Write Response.
    case writeRequest(handle: UInt16, value: [UInt8])
    /// 0x13: the write succeeded.
    case writeResponse
    /// 0x52: writes a value, without an answer.
    case writeCommand(handle: UInt16, value: [UInt8])
    /// 0x1B: a server sends a value, without an answer.
    case handleValueNotification(handle: UInt16, value: [UInt8])
    /// 0x1D: a server sends a value, answered by a Handle Value Confirmation.
    case handleValueIndication(handle: UInt16, value: [UInt8])
    /// 0x1E: the client received the indication.
    case handleValueConfirmation
    /// Any other opcode, with the bytes that follow it.
    case unknown(ATTOpcode, [UInt8])

    /// The PDU's opcode.
    public var opcode: ATTOpcode {
        switch self {
        case .errorResponse: .errorResponse
        case .exchangeMTURequest: .exchangeMTURequest
        case .exchangeMTUResponse: .exchangeMTUResponse
        case .findInformationRequest: .findInformationRequest
        case .findInformationResponse: .findInformationResponse
        case .findByTypeValueRequest: .findByTypeValueRequest
        case .findByTypeValueResponse: .findByTypeValueResponse
        case .readByTypeRequest: .readByTypeRequest
        case .readByTypeResponse: .readByTypeResponse
        case .readRequest: .readRequest
        case .readResponse: .readResponse
        case .readBlobRequest: .readBlobRequest
        case .readBlobResponse: .readBlobResponse
        case .readByGroupTypeRequest: .readByGroupTypeRequest
        case .readByGroupTypeResponse: .readByGroupTypeResponse
        case .writeRequest: .writeRequest
        case .writeResponse: .writeResponse
        case .writeCommand: .writeCommand
        case .handleValueNotification: .handleValueNotification
        case .handleValueIndication: .handleValueIndication
        case .handleValueConfirmation: .handleValueConfirmation
        case .unknown(let opcode, _): opcode
        }
    }

    /// The PDU's bytes: opcode, then parameters, every integer little-endian.
    public func encoded() -> [UInt8] {
        var writer = ByteWriter()
        writer.writeByte(opcode.rawValue)
        encodeParameters(into: &writer)
        return writer.bytes
    }

    private func encodeParameters(into writer: inout ByteWriter) {
        switch self {
        case .errorResponse(let request, let handle, let error):
            writer.writeByte(request.rawValue)
            writer.writeInteger(handle, endianness: .little)
            writer.writeByte(error.rawValue)
        case .exchangeMTURequest(let mtu), .exchangeMTUResponse(let mtu):
            writer.writeInteger(mtu, endianness: .little)
        case .findInformationRequest(let range):
            writer.writeRange(range)
        case .findInformationResponse(let data):
            writer.writeFindInformation(data)
        case .findByTypeValueRequest(let range, let type, let value):
            writer.writeRange(range)
            writer.writeInteger(type, endianness: .little)
            writer.writeBytes(value)
        case .findByTypeValueResponse(let ranges):
            for range in ranges { writer.writeRange(range) }
        case .readByTypeRequest(let range, let type), .readByGroupTypeRequest(let range, let type):
            writer.writeRange(range)
            writer.writeBytes(
                type.shortValue.map { [UInt8(truncatingIfNeeded: $0), UInt8($0 >> 8)] } ?? type.littleEndianBytes
            )
        case .readByTypeResponse(let entries):
            writer.writeByte(UInt8(truncatingIfNeeded: 2 + (entries.first?.value.count ?? 0)))
            for entry in entries {
                writer.writeInteger(entry.handle, endianness: .little)
                writer.writeBytes(entry.value)
            }
        case .readByGroupTypeResponse(let entries):
            writer.writeByte(UInt8(truncatingIfNeeded: 4 + (entries.first?.value.count ?? 0)))
            for entry in entries {
                writer.writeRange(entry.range)
                writer.writeBytes(entry.value)
            }
        default:
            encodeSimpleParameters(into: &writer)
        }
    }

    /// The PDUs made of a handle, a value, an offset, or nothing.
    private func encodeSimpleParameters(into writer: inout ByteWriter) {
        switch self {
        case .readRequest(let handle):
            writer.writeInteger(handle, endianness: .little)
        case .readResponse(let value), .readBlobResponse(let value):
            writer.writeBytes(value)
        case .readBlobRequest(let handle, let offset):
            writer.writeInteger(handle, endianness: .little)
            writer.writeInteger(offset, endianness: .little)
        case .writeRequest(let handle, let value), .writeCommand(let handle, let value),
            .handleValueNotification(let handle, let value), .handleValueIndication(let handle, let value):
            writer.writeInteger(handle, endianness: .little)
            writer.writeBytes(value)
        case .unknown(_, let parameters):
            writer.writeBytes(parameters)
        default:
            break
        }
    }
}

extension ByteWriter {
    /// Appends a range: start, then end.
    mutating func writeRange(_ range: ATTHandleRange) {
        writeInteger(range.start, endianness: .little)
        writeInteger(range.end, endianness: .little)
    }

    /// Appends a Find Information Response's format byte and entries.
    mutating func writeFindInformation(_ data: ATTFindInformationData) {
        switch data {
        case .uuid16(let entries):
            writeByte(0x01)
            for entry in entries {
                writeInteger(entry.handle, endianness: .little)
                writeInteger(entry.uuid, endianness: .little)
            }
        case .uuid128(let entries):
            writeByte(0x02)
            for entry in entries {
                writeInteger(entry.handle, endianness: .little)
                writeBytes(entry.uuid.littleEndianBytes)
            }
        }
    }
}
