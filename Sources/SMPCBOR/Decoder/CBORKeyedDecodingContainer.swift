struct CBORKeyedDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: _CBORDecoder
    let map: CBORMap
    var codingPath: [any CodingKey] { decoder.codingPath }

    /// Text keys are matched by their UTF-8 bytes (CBOR's equality, not `String`'s canonical
    /// equivalence); a key with an `intValue` also matches an integer key.
    private func lookup(_ key: Key) -> CBOR? {
        for entry in map.entries {
            switch entry.key {
            case .textString(let text) where text.utf8.elementsEqual(key.stringValue.utf8): return entry.value
            case .unsignedInt, .negativeInt:
                if let int = key.intValue, entry.key.int64Value == Int64(int) { return entry.value }
            default: continue
            }
        }
        return nil
    }

    var allKeys: [Key] {
        map.entries.compactMap { entry in
            switch entry.key {
            case .textString(let text): Key(stringValue: text)
            default: entry.key.int64Value.flatMap { Int(exactly: $0) }.flatMap { Key(intValue: $0) }
            }
        }
    }

    func contains(_ key: Key) -> Bool { lookup(key) != nil }

    private func require(_ key: Key) throws -> CBOR {
        guard let value = lookup(key) else {
            throw DecodingError.keyNotFound(key, decoder.context("no value for key \"\(key.stringValue)\""))
        }
        return value
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        switch try require(key) {
        case .null, .undefined: true
        default: false
        }
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try decoder.unbox(try require(key), as: type, codingPath: codingPath + [key])
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type,
        forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try child(key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try child(key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        _CBORDecoder(
            value: map["super"] ?? .null,
            codingPath: codingPath + [AnyCodingKey("super")],
            userInfo: decoder.sendableUserInfo
        )
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        _CBORDecoder(value: lookup(key) ?? .null, codingPath: codingPath + [key], userInfo: decoder.sendableUserInfo)
    }

    private func child(_ key: Key) throws -> _CBORDecoder {
        _CBORDecoder(value: try require(key), codingPath: codingPath + [key], userInfo: decoder.sendableUserInfo)
    }
}
