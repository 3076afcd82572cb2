struct CBORUnkeyedEncodingContainer: UnkeyedEncodingContainer {
    let encoder: _CBOREncoder
    let box: EncodingBox
    var codingPath: [any CodingKey] { encoder.codingPath }
    var count: Int { box.array?.count ?? 0 }

    private func append() -> (EncodingBox, _CBOREncoder) {
        let child = EncodingBox()
        let key = AnyCodingKey(intValue: count)
        box.array?.append(child)
        return (child, encoder.child(child, key: key))
    }

    mutating func encodeNil() throws {
        box.array?.append(EncodingBox(.null))
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let (child, childEncoder) = append()
        try childEncoder.encode(value, into: child)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<
        NestedKey
    > {
        append().1.container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        append().1.unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        append().1
    }
}
