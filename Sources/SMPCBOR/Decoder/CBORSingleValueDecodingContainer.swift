struct CBORSingleValueDecodingContainer: SingleValueDecodingContainer {
    let decoder: _CBORDecoder
    var codingPath: [any CodingKey] { decoder.codingPath }

    func decodeNil() -> Bool {
        switch decoder.value.untagged {
        case .null, .undefined: true
        default: false
        }
    }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try decoder.unbox(decoder.value, as: type, codingPath: codingPath)
    }
}
