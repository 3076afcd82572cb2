import Foundation
import SMPCBOR

// Image chunks are the hot path of every upgrade: they encode and decode without Codable's
// containers. The output equals the synthesised conformance byte for byte and the input
// rules are the same (any key order, definite or indefinite maps, unknown keys skipped,
// duplicate keys refused); ImageManagementTests checks both against each other.

extension ImageManagement.Upload: CBORDirectEncodable, CBORDirectDecodable {
    public var encodedSizeHint: Int { data.count + (sha256?.count ?? 0) + 48 }

    public func encodeCBOR(into writer: inout CBORWriter) {
        let count =
            2 + (length == nil ? 0 : 1) + (sha256 == nil ? 0 : 1) + (image == nil ? 0 : 1) + (upgrade == nil ? 0 : 1)
        writer.writeHead(major: 5, argument: UInt64(count))
        if let length {
            writer.writeText("len")
            writer.writeHead(major: 0, argument: length)
        }
        writer.writeText("off")
        writer.writeHead(major: 0, argument: offset)
        if let sha256 {
            writer.writeText("sha")
            writer.writeHead(major: 2, argument: UInt64(sha256.count))
            writer.writeRaw(sha256)
        }
        writer.writeText("data")
        writer.writeHead(major: 2, argument: UInt64(data.count))
        writer.writeRaw(data)
        if let image {
            writer.writeText("image")
            writer.writeHead(major: 0, argument: UInt64(image))
        }
        if let upgrade {
            writer.writeText("upgrade")
            writer.write(.boolean(upgrade))
        }
    }

    public init(cbor reader: inout CBORReader) throws {
        var length: UInt64?
        var offset: UInt64?
        var sha256: Data?
        var data: Data?
        var image: UInt32?
        var upgrade: Bool?
        try reader.readMap(Self.keys) { reader, key, keyOffset in
            switch key {
            case 0: length = try reader.readUnique(length, keyOffset) { try $0.readUnsigned() }
            case 1: offset = try reader.readUnique(offset, keyOffset) { try $0.readUnsigned() }
            case 2: sha256 = try reader.readUnique(sha256, keyOffset) { try $0.readByteString() }
            case 3: data = try reader.readUnique(data, keyOffset) { try $0.readByteString() }
            case 4:
                image = try reader.readUnique(image, keyOffset) { reader in
                    let start = reader.offset
                    guard let value = UInt32(exactly: try reader.readUnsigned()) else {
                        throw CBORError(.unexpectedType, at: start)
                    }
                    return value
                }
            case 5: upgrade = try reader.readUnique(upgrade, keyOffset) { try $0.readBool() }
            default: try reader.skipValue()
            }
        }
        guard let offset else { throw Self.missing(.offset) }
        guard let data else { throw Self.missing(.data) }
        self.init(offset: offset, data: data, length: length, sha256: sha256, image: image, upgrade: upgrade)
    }

    private static let keys = CBORKeySet(["len", "off", "sha", "data", "image", "upgrade"])
    private static let answerKeys = CBORKeySet(["off", "match"])

    /// The answer to a chunk, `{off: N}` or `{off: N, match: B}`, read without a tree. Anything
    /// else — an error envelope, another key, a key twice, a value of another type — goes the
    /// general way.
    public static func decodeResponseQuickly(_ reader: inout CBORReader) -> Response? {
        var offset: UInt64?
        var match: Bool?
        var plain = true
        do {
            try reader.readMap(answerKeys) { reader, key, _ in
                switch key {
                case 0 where offset == nil: offset = try reader.readUnsigned()
                case 1 where match == nil: match = try reader.readBool()
                default:
                    plain = false
                    try reader.skipValue()
                }
            }
        } catch {
            return nil
        }
        guard plain, let offset else { return nil }
        return Response(offset: offset, match: match)
    }

    private static func missing(_ key: CodingKeys) -> DecodingError {
        .keyNotFound(key, .init(codingPath: [], debugDescription: "no value for key \"\(key.stringValue)\""))
    }
}

extension CBORReader {
    /// Reads a map with text keys entry by entry (definite or indefinite), handing the index of
    /// each key in `keys` (`nil` for others) and the key's offset to `body`, which must consume
    /// the value.
    /// - Throws: ``CBORError`` for malformed input or a non-text key; whatever `body` throws.
    mutating func readMap(_ keys: CBORKeySet, _ body: (inout CBORReader, Int?, Int) throws -> Void) throws {
        if let count = try readMapHeader() {
            for _ in 0..<count {
                let keyOffset = offset
                let key = try readKey(keys)
                try body(&self, key, keyOffset)
            }
        } else {
            while !(try readBreakIfPresent()) {
                let keyOffset = offset
                let key = try readKey(keys)
                if try readBreakIfPresent() { throw CBORError(.unexpectedBreak, at: offset - 1) }
                try body(&self, key, keyOffset)
            }
        }
    }

    /// Reads a value for a key that must not have been seen yet in this map.
    mutating func readUnique<T>(_ existing: T?, _ keyOffset: Int, _ read: (inout CBORReader) throws -> T) throws -> T {
        guard existing == nil else { throw CBORError(.duplicateMapKey, at: keyOffset) }
        return try read(&self)
    }
}
