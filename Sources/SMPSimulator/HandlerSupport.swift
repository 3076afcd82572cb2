import Foundation
import SMPCBOR
import SMPCore

/// One request as a handler sees it: the header and the decoded payload.
struct SMPServerRequest {
    /// The request's header.
    let header: SMPHeader
    /// The request frame.
    let frame: SMPFrame

    /// Whether the client spoke SMP v1 (group errors are then translated to a legacy `rc`).
    var isLegacy: Bool { header.version == .v1 }
    /// Whether this is a read (0) rather than a write (2).
    var isRead: Bool { header.operation == .read }

    /// Decodes the payload as a typed request; a payload that is not a map of the right shape is
    /// `EINVAL`, as `zcbor_map_decode_bulk` failing is in Zephyr.
    func decode<R: SMPRequest>(_ type: R.Type) throws(HandlerFailure) -> R {
        // zcbor's decoders accept no null anywhere, while Codable reads null as "absent".
        if let map = try? frame.payloadValue().mapValue,
            map.entries.contains(where: { $0.value == .null || $0.value == .undefined })
        {
            throw HandlerFailure.management(.invalidValue)
        }
        do {
            return try frame.decodeRequest(as: type)
        } catch {
            throw HandlerFailure.management(.invalidValue)
        }
    }

    /// The payload as a map for Zephyr's "bulk" decoding: unknown keys ignored, missing keys
    /// absent, a present key of the wrong type `EINVAL`.
    func map() throws(HandlerFailure) -> BulkMap {
        guard let value = try? frame.payloadValue(), let map = value.mapValue else {
            throw HandlerFailure.management(.invalidValue)
        }
        return BulkMap(map: map)
    }
}

/// Zephyr's `zcbor_map_decode_bulk` semantics over a decoded map.
struct BulkMap {
    let map: CBORMap

    func contains(_ key: String) -> Bool { map[key] != nil }

    func text(_ key: String) throws(HandlerFailure) -> String? {
        guard let value = map[key] else { return nil }
        guard let text = value.stringValue else { throw .management(.invalidValue) }
        return text
    }

    func bytes(_ key: String) throws(HandlerFailure) -> [UInt8]? {
        guard let value = map[key] else { return nil }
        guard let data = value.dataValue else { throw .management(.invalidValue) }
        return Array(data)
    }

    func unsigned(_ key: String) throws(HandlerFailure) -> UInt64? {
        guard let value = map[key] else { return nil }
        guard let number = value.uint64Value else { throw .management(.invalidValue) }
        return number
    }

    func bool(_ key: String) throws(HandlerFailure) -> Bool? {
        guard let value = map[key] else { return nil }
        guard let flag = value.boolValue else { throw .management(.invalidValue) }
        return flag
    }
}

extension CBORMap {
    /// A response's map, with the wire keys of its SMPCore type (declaration order): the
    /// simulator answers in the shape the client decodes, spelled once.
    /// - Parameter response: the response.
    init(response: some Encodable) {
        // The SMPCore response types encode to a map without fail; an empty map would show at
        // once in every test of that command.
        self = (try? CBOREncoder().encodeToValue(response).mapValue) ?? CBORMap()
    }

    /// A response's map after a management return code. Some handlers write `rc` into their
    /// success answers, first: Zephyr 3.4's statistics handlers (`"rc": 0`) and nRF's SUIT upload
    /// handlers (0, or 1 with the offset they expect). `rc` belongs to the error envelope, not to
    /// any response type, so it is written here, where the envelope's other answers are built.
    /// - Parameters:
    ///   - returnCode: the code written first.
    ///   - response: the response whose keys follow.
    init(returnCode: SMPReturnCode, response: some Encodable) {
        self = ResponseEncoding.failureMap(.management(returnCode), legacy: false)
        entries += CBORMap(response: response).entries
    }
}

/// How a handler refuses a request.
enum HandlerFailure: Error, Equatable {
    /// A management-layer code, sent as `{rc}` to every client.
    case management(SMPReturnCode)
    /// A group code: `{err: {group, rc}}` to v2 clients, the translated legacy `rc` to v1
    /// clients; `extra` entries follow (e.g. the file length after an offset error).
    case group(SMPGroup, Int, extra: CBORMap = [:])
}

/// What a handler produces.
enum HandlerOutcome {
    /// Success: the response map, in the order Zephyr writes it.
    case success(CBORMap)
    /// A refusal.
    case failure(HandlerFailure)
    /// No answer at all (e.g. power lost while handling it).
    case silence
}

/// Builders for response maps.
extension CBORMap {
    mutating func put(_ key: String, _ value: CBOR) { append(key: .textString(key), value: value) }
    mutating func put(_ key: String, _ value: String) { put(key, .textString(value)) }
    mutating func put(_ key: String, _ value: Bool) { put(key, .boolean(value)) }
    mutating func put(_ key: String, _ value: some BinaryInteger) { put(key, CBOR(value)) }
    mutating func put(_ key: String, bytes: some Sequence<UInt8>) { put(key, .byteString(Data(bytes))) }
}

/// Response encoding and the v1 translation of group errors.
enum ResponseEncoding {
    /// Encodes a response payload; with `indefinite` every map and array is written the way
    /// Zephyr's zcbor writes them without `ZCBOR_CANONICAL` (`bf … ff`, `9f … ff`).
    static func encode(_ map: CBORMap, indefinite: Bool) -> [UInt8] {
        guard indefinite else { return CBORWriter.encode(.map(map)) }
        var writer = CBORWriter()
        write(.map(map), into: &writer)
        return writer.bytes
    }

    private static func write(_ value: CBOR, into writer: inout CBORWriter) {
        switch value {
        case .map(let map):
            writer.writeIndefiniteMapStart()
            for entry in map.entries {
                write(entry.key, into: &writer)
                write(entry.value, into: &writer)
            }
            writer.writeBreak()
        case .array(let elements):
            writer.writeIndefiniteArrayStart()
            for element in elements { write(element, into: &writer) }
            writer.writeBreak()
        default:
            writer.write(value)
        }
    }

    /// The response map for a refusal, as Zephyr builds it for a client of `version`.
    static func failureMap(_ failure: HandlerFailure, legacy: Bool) -> CBORMap {
        var map = CBORMap()
        switch failure {
        case .management(let rc):
            map.put("rc", rc.rawValue)
        case .group(let group, let rc, let extra):
            if legacy {
                map.put("rc", legacyCode(group: group, rc: rc).rawValue)
            } else {
                var err = CBORMap()
                err.put("group", Int(group.rawValue))
                err.put("rc", rc)
                map.put("err", .map(err))
            }
            map.entries += extra.entries
        }
        return map
    }

    /// Zephyr's per-group translation of a group error to a legacy `rc`
    /// (`CONFIG_MCUMGR_SMP_SUPPORT_ORIGINAL_PROTOCOL`).
    static func legacyCode(group: SMPGroup, rc: Int) -> SMPReturnCode {
        switch group {
        case .os:
            switch rc {
            case 2: return .invalidValue
            case 3, 4: return .noEntry
            default: return .unknown
            }
        case .image:
            switch rc {
            case 3, 4: return .noEntry
            case 9, 27, 28: return .badState
            case 15: return .noMemory
            case 14, 19, 20, 21, 22, 24, 25: return .invalidValue
            default: return .unknown
            }
        case .statistics:
            switch rc {
            case 2, 3: return .noEntry
            case 4: return .invalidValue
            default: return .unknown
            }
        case .settings:
            switch rc {
            case 2: return .invalidValue
            case 3, 5: return .noEntry
            case 4, 6, 7: return .notSupported
            default: return .unknown
            }
        case .fileSystem:
            switch rc {
            case 2, 13: return .invalidValue
            case 3, 14: return .noEntry
            default: return .unknown
            }
        case .shell:
            switch rc {
            case 2, 3: return .invalidValue
            default: return .unknown
            }
        case .enumeration:
            switch rc {
            case 2, 3: return .noMemory
            case 4: return .noEntry
            default: return .unknown
            }
        default:
            return .unknown
        }
    }
}
