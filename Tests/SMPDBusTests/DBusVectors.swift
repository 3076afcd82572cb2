import Foundation
import SMPBytes
import SMPDBus
import Testing

/// The golden messages of `Fixtures/dbus-vectors.json` (made by `scripts/generate-dbus-vectors.py`
/// with dbus-fast and GLib), as messages built from their JSON descriptions.
enum DBusVectors {
    struct File: Decodable {
        var generator: String
        var cases: [Case]
    }

    struct Case: Decodable, CustomTestStringConvertible, Sendable {
        var name: String
        var kind: UInt8
        var serial: UInt32
        var flags: UInt8
        var sig: String
        var body: [JSONTree]
        var fds: UInt32
        var destination: String?
        var path: String?
        var interface: String?
        var member: String?
        var errorName: String?
        var replySerial: UInt32?
        var sender: String?
        var little: String
        /// The sender dbus-fast's bytes carry: it leaves the field to the bus, so always `nil`.
        var littleSender: String?
        var big: String

        var testDescription: String { name }

        enum CodingKeys: String, CodingKey {
            case name, kind, serial, flags, sig, body, fds, destination, path, interface, member, sender, little, big
            case errorName = "error_name"
            case replySerial = "reply_serial"
            case littleSender = "little_sender"
        }

        /// The message the JSON describes.
        /// - Parameter littleEndianPeer: as dbus-fast marshals it (without the sender).
        func message(asDBusFastWritesIt littleEndianPeer: Bool = false) throws -> DBusMessage {
            let signature = try DBusSignature(sig)
            let values = try zip(signature.types, body).map { try DBusVectors.value($1, as: $0) }
            guard let kind = DBusMessage.Kind(rawValue: kind) else { throw VectorError("kind \(kind)") }
            return DBusMessage(
                kind: kind,
                flags: .init(rawValue: flags),
                serial: serial,
                path: try path.map { try DBusObjectPath($0) },
                interface: interface,
                member: member,
                errorName: errorName,
                replySerial: replySerial,
                destination: destination,
                sender: littleEndianPeer ? littleSender : sender,
                unixFDCount: fds,
                body: values
            )
        }
    }

    struct VectorError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// Any JSON value, integers kept exact.
    indirect enum JSONTree: Decodable, Sendable {
        case bool(Bool)
        case int(Int64)
        case uint(UInt64)
        case double(Double)
        case string(String)
        case array([JSONTree])
        case object([String: JSONTree])

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let value = try? container.decode(Bool.self) {
                self = .bool(value)
            } else if let value = try? container.decode(Int64.self) {
                self = .int(value)
            } else if let value = try? container.decode(UInt64.self) {
                self = .uint(value)
            } else if let value = try? container.decode(Double.self) {
                self = .double(value)
            } else if let value = try? container.decode(String.self) {
                self = .string(value)
            } else if let value = try? container.decode([JSONTree].self) {
                self = .array(value)
            } else {
                self = .object(try container.decode([String: JSONTree].self))
            }
        }
    }

    static func load() throws -> File {
        guard let url = Bundle.module.url(forResource: "dbus-vectors", withExtension: "json", subdirectory: "Fixtures")
        else { throw VectorError("Fixtures/dbus-vectors.json is missing") }
        return try JSONDecoder().decode(File.self, from: Data(contentsOf: url))
    }

    static let cases: [Case] = (try? load().cases) ?? []

    static func value(_ json: JSONTree, as type: DBusType) throws -> DBusValue {
        switch (type, json) {
        case (.byte, .int(let v)): return .byte(try exact(v))
        case (.boolean, .bool(let v)): return .boolean(v)
        case (.int16, .int(let v)): return .int16(try exact(v))
        case (.uint16, .int(let v)): return .uint16(try exact(v))
        case (.int32, .int(let v)): return .int32(try exact(v))
        case (.uint32, .int(let v)): return .uint32(try exact(v))
        case (.int64, .int(let v)): return .int64(v)
        case (.uint64, .int(let v)): return .uint64(try exact(v))
        case (.uint64, .uint(let v)): return .uint64(v)
        case (.double, .string(let text)):
            guard let v = Double(text) else { throw VectorError("double '\(text)'") }
            return .double(v)
        case (.unixFD, .int(let v)): return .unixFD(try exact(v))
        case (.string, .string(let v)): return .string(v)
        case (.objectPath, .string(let v)): return .objectPath(try DBusObjectPath(v))
        case (.signature, .string(let v)): return .signature(try DBusSignature(v))
        case (.variant, .object(let object)):
            guard case .string(let sig)? = object["sig"], let inner = object["value"] else {
                throw VectorError("variant")
            }
            return .variant(try value(inner, as: try DBusSignature.singleType(sig)))
        case (.array(.byte), .array(let items)):
            return .bytes(
                try items.map { item in
                    guard case .int(let v) = item else { throw VectorError("byte") }
                    return try exact(v)
                }
            )
        case (.array(let element), .array(let items)):
            return .array(element, try items.map { try value($0, as: element) })
        case (.dictionary(let key, let valueType), .array(let pairs)):
            return .dictionary(
                key: key,
                value: valueType,
                try pairs.map { pair in
                    guard case .array(let kv) = pair, kv.count == 2 else { throw VectorError("entry") }
                    return DBusDictionaryEntry(key: try value(kv[0], as: key), value: try value(kv[1], as: valueType))
                }
            )
        case (.structure(let fields), .array(let items)) where fields.count == items.count:
            return .structure(try zip(fields, items).map { try value($1, as: $0) })
        default:
            throw VectorError("\(json) as \(type)")
        }
    }

    private static func exact<T: FixedWidthInteger>(_ v: Int64) throws -> T {
        guard let value = T(exactly: v) else { throw VectorError("\(v) does not fit \(T.self)") }
        return value
    }
}
