struct CBORKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: _CBOREncoder
    let box: EncodingBox
    var codingPath: [any CodingKey] { encoder.codingPath }

    mutating func encodeNil(forKey key: Key) throws {
        box.set(key.stringValue, EncodingBox(.null))
    }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        // Fields CBOR represents directly need no child encoder (the common case).
        if let primitive = CBOREncoder.primitive(value) {
            box.set(key.stringValue, EncodingBox(primitive))
            return
        }
        let child = EncodingBox()
        try encoder.child(child, key: key).encode(value, into: child)
        box.set(key.stringValue, child)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type,
        forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let child = EncodingBox()
        box.set(key.stringValue, child)
        return encoder.child(child, key: key).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let child = EncodingBox()
        box.set(key.stringValue, child)
        return encoder.child(child, key: key).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        superEncoder(forKey: Key(stringValue: "super") ?? AnyCodingKey("super"))
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        superEncoder(forKey: key as any CodingKey)
    }

    private func superEncoder(forKey key: any CodingKey) -> any Encoder {
        let child = EncodingBox()
        box.set(key.stringValue, child)
        return encoder.child(child, key: key)
    }
}

/// A coding key made from a string or an index, for paths and `super` keys.
struct AnyCodingKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(_ string: String) {
        stringValue = string
        intValue = nil
    }
    init?(stringValue: String) { self.init(stringValue) }
    init(intValue: Int) {
        stringValue = "\(intValue)"
        self.intValue = intValue
    }
}
