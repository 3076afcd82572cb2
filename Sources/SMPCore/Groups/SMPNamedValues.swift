/// A CBOR map whose keys are names chosen by the device, kept in wire order.
///
/// Several responses use a map as a table: task statistics (`tasks`: task name → statistics),
/// memory pools, statistics group fields, log module and level tables, file-system hash types. A
/// `Dictionary` would decode them but forget the order, so a simulated device encoding one would
/// emit a different byte sequence on every run. This type is backed by an array: decoding keeps
/// the device's order, encoding writes the entries in the order they were added.
///
/// Lookup by name is linear, which suits tables of a few dozen entries. Only text keys are
/// read; an entry with a non-text key is skipped when decoding.
public struct SMPNamedValues<Value> {
    /// One named value.
    public struct Entry {
        /// The map key.
        public var name: String
        /// The value under that key.
        public var value: Value

        /// Creates an entry.
        /// - Parameters:
        ///   - name: the map key.
        ///   - value: the value.
        public init(name: String, value: Value) {
            self.name = name
            self.value = value
        }
    }

    /// The entries in wire order.
    public var entries: [Entry]

    /// Creates a table from entries, keeping their order.
    /// - Parameter entries: the entries.
    public init(_ entries: [Entry] = []) {
        self.entries = entries
    }

    /// The names in wire order.
    public var names: [String] { entries.map(\.name) }

    /// The value of the first entry called `name`; setting replaces it in place, appends a new
    /// entry, or (with `nil`) removes it.
    public subscript(name: String) -> Value? {
        get { entries.first { $0.name == name }?.value }
        set {
            if let index = entries.firstIndex(where: { $0.name == name }) {
                if let newValue { entries[index].value = newValue } else { entries.remove(at: index) }
            } else if let newValue {
                entries.append(Entry(name: name, value: newValue))
            }
        }
    }

    /// The table as a dictionary (order lost; the first of duplicate names wins).
    public var dictionary: [String: Value] {
        Dictionary(entries.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
    }
}

extension SMPNamedValues: RandomAccessCollection {
    public var startIndex: Int { entries.startIndex }
    public var endIndex: Int { entries.endIndex }
    public subscript(position: Int) -> Entry { entries[position] }
}

extension SMPNamedValues: ExpressibleByDictionaryLiteral {
    /// Creates a table from a literal, keeping the literal's order.
    public init(dictionaryLiteral elements: (String, Value)...) {
        entries = elements.map { Entry(name: $0.0, value: $0.1) }
    }
}

extension SMPNamedValues.Entry: Sendable where Value: Sendable {}
extension SMPNamedValues.Entry: Equatable where Value: Equatable {}
extension SMPNamedValues.Entry: Hashable where Value: Hashable {}
extension SMPNamedValues: Sendable where Value: Sendable {}
extension SMPNamedValues: Equatable where Value: Equatable {}
extension SMPNamedValues: Hashable where Value: Hashable {}

extension SMPNamedValues: Encodable where Value: Encodable {
    /// Writes a map with one entry per element, in order.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: SMPNameKey.self)
        for entry in entries {
            try container.encode(entry.value, forKey: SMPNameKey(entry.name))
        }
    }
}

extension SMPNamedValues: Decodable where Value: Decodable {
    /// Reads every text-keyed entry of a map, in the order the decoder presents the keys (wire
    /// order for `CBORDecoder`).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: SMPNameKey.self)
        entries = try container.allKeys.map { key in
            Entry(name: key.stringValue, value: try container.decode(Value.self, forKey: key))
        }
    }
}

/// A coding key for maps whose keys are data (names chosen by the device).
struct SMPNameKey: CodingKey, Hashable {
    let stringValue: String
    var intValue: Int? { nil }

    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}
