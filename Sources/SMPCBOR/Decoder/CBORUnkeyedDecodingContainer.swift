struct CBORUnkeyedDecodingContainer: UnkeyedDecodingContainer {
    let decoder: _CBORDecoder
    let elements: [CBOR]
    private(set) var currentIndex = 0

    init(decoder: _CBORDecoder, elements: [CBOR]) {
        self.decoder = decoder
        self.elements = elements
    }

    var codingPath: [any CodingKey] { decoder.codingPath }
    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    private var currentPath: [any CodingKey] { codingPath + [AnyCodingKey(intValue: currentIndex)] }

    private mutating func next<T>(_ type: T.Type) throws -> CBOR {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                type,
                decoder.context("array has only \(elements.count) elements", path: currentPath)
            )
        }
        defer { currentIndex += 1 }
        return elements[currentIndex]
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd else { return false }
        switch elements[currentIndex] {
        case .null, .undefined:
            currentIndex += 1
            return true
        default:
            return false
        }
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let path = currentPath
        return try decoder.unbox(try next(type), as: type, codingPath: path)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<
        NestedKey
    > {
        try childDecoder().container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try childDecoder().unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        try childDecoder()
    }

    private mutating func childDecoder() throws -> _CBORDecoder {
        let path = currentPath
        return _CBORDecoder(value: try next(CBOR.self), codingPath: path, userInfo: decoder.sendableUserInfo)
    }
}
