struct CBORSingleValueEncodingContainer: SingleValueEncodingContainer {
    let encoder: _CBOREncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    mutating func encodeNil() throws {
        encoder.box.value = .null
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        // A single value that is itself a keyed or unkeyed type fills this encoder's box.
        try encoder.encode(value, into: encoder.box)
    }
}
