import Foundation
import MCUmgrConnect

/// The devices of a fleet, as people write them by hand or a script generates them: one device
/// per line — its connection URL, an optional name, optional `key=value` labels — and `#`
/// comments.
///
/// ```
/// # rack A, gateway 1
/// udp://10.0.0.11:1337   pump-11   site=north  host=gw1
/// udp://10.0.0.12:1337   pump-12   site=north  host=gw1
/// serial:///dev/ttyACM0?baud=115200  bench-0
/// ble://Zephyr%20DFU                  # no name: the URL is the device's identity
/// ```
///
/// Parsing is strict: a line that cannot be read is an error naming the line and what is wrong,
/// and a device named twice (by name, or by URL) is refused, so a rollout's state can always be
/// matched to one device.
public struct Inventory: Sendable, Hashable {
    /// One device.
    public struct Device: Sendable, Hashable, Identifiable {
        /// How to reach it.
        public var url: ConnectionURL
        /// The name given in the inventory, if any.
        public var name: String?
        /// Labels (`site=north`), by key.
        public var labels: [String: String]
        /// The line it was read from (1-based), or `nil` for a device given on the command line.
        public var line: Int?

        /// The device's identity in a rollout's state: its name, else its URL as printed.
        public var id: String { name ?? url.description }

        /// Creates a device.
        /// - Parameters:
        ///   - url: how to reach it.
        ///   - name: its name, if any.
        ///   - labels: labels by key.
        ///   - line: the inventory line it came from.
        public init(url: ConnectionURL, name: String? = nil, labels: [String: String] = [:], line: Int? = nil) {
            self.url = url
            self.name = name
            self.labels = labels
            self.line = line
        }

        /// The device as an inventory line: it parses back to the same device.
        public var inventoryLine: String {
            var words = [url.description]
            if let name { words.append(name) }
            words += labels.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            return words.joined(separator: " ")
        }
    }

    /// The devices, in the order they were written (the rollout's order).
    public var devices: [Device]

    /// Creates an inventory of devices.
    /// - Parameter devices: the devices, in rollout order.
    /// - Throws: ``InventoryError`` when two devices have the same identity.
    public init(devices: [Device]) throws(InventoryError) {
        var seen: [String: Device] = [:]
        var urls: [ConnectionURL: Device] = [:]
        for device in devices {
            if let first = seen[device.id] {
                throw InventoryError(line: device.line, "'\(device.id)' is named twice (first \(Self.place(first)))")
            }
            if let first = urls[device.url] {
                throw InventoryError(
                    line: device.line,
                    "\(device.url) is listed twice (first \(Self.place(first))): one device, one line"
                )
            }
            seen[device.id] = device
            urls[device.url] = device
        }
        self.devices = devices
    }

    /// Parses an inventory file's text.
    /// - Parameter text: the file's contents.
    /// - Throws: ``InventoryError`` naming the first line that cannot be read.
    public init(parsing text: String) throws(InventoryError) {
        var devices: [Device] = []
        var number = 0
        // "\r\n" is one Character in Swift: splitting on newlines takes both line ends.
        for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            number += 1
            var line = rawLine
            if let comment = Self.commentStart(line) { line = line[..<comment] }
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard !words.isEmpty else { continue }
            devices.append(try Self.device(words, line: number))
        }
        try self.init(devices: devices)
    }

    /// Reads an inventory file.
    /// - Parameter url: the file.
    /// - Throws: ``InventoryError`` for an unreadable file or a line that cannot be read.
    public init(contentsOf url: URL) throws(InventoryError) {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw InventoryError(line: nil, "cannot read \(url.path): \(error.localizedDescription)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw InventoryError(line: nil, "\(url.path) is not UTF-8 text")
        }
        try self.init(parsing: text)
    }

    /// A `#` that starts a word begins a comment (a `#` inside a word is part of it).
    private static func commentStart(_ line: Substring) -> Substring.Index? {
        var previous: Character = " "
        for index in line.indices {
            if line[index] == "#", previous == " " || previous == "\t" { return index }
            previous = line[index]
        }
        return nil
    }

    private static func device(_ words: [Substring], line: Int) throws(InventoryError) -> Device {
        let url: ConnectionURL
        do {
            url = try ConnectionURL(parsing: String(words[0]))
        } catch {
            throw InventoryError(line: line, error.message)
        }
        var name: String?
        var labels: [String: String] = [:]
        for word in words.dropFirst() {
            guard let equals = word.firstIndex(of: "=") else {
                guard name == nil, labels.isEmpty else {
                    throw InventoryError(
                        line: line,
                        "'\(word)': the name comes right after the URL, labels are key=value"
                    )
                }
                name = try checkedName(word, line: line)
                continue
            }
            let key = String(word[..<equals])
            let value = String(word[word.index(after: equals)...])
            guard isLabelKey(key) else {
                throw InventoryError(line: line, "label key '\(key)' must be letters, digits, '-', '_' or '.'")
            }
            guard !value.isEmpty else { throw InventoryError(line: line, "label '\(key)' has no value") }
            guard labels[key] == nil else { throw InventoryError(line: line, "label '\(key)' is given twice") }
            labels[key] = value
        }
        return Device(url: url, name: name, labels: labels, line: line)
    }

    private static func checkedName(_ word: Substring, line: Int) throws(InventoryError) -> String {
        guard !word.contains("://") else {
            throw InventoryError(line: line, "'\(word)': one device per line (a second URL)")
        }
        guard word.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F }) else {
            throw InventoryError(line: line, "the name '\(word)' has a control character")
        }
        return String(word)
    }

    private static func isLabelKey(_ key: String) -> Bool {
        !key.isEmpty
            && key.unicodeScalars.allSatisfy {
                CharacterSet.alphanumerics.contains($0) && $0.isASCII || "-_.".unicodeScalars.contains($0)
            }
    }

    private static func place(_ device: Device) -> String {
        device.line.map { "on line \($0)" } ?? "on the command line"
    }
}

/// An inventory that cannot be used, with the line (1-based) that says why.
public struct InventoryError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The line, or `nil` for the whole file or a device given on the command line.
    public var line: Int?
    /// What is wrong.
    public var message: String

    /// Creates an error.
    /// - Parameters:
    ///   - line: the line it is about.
    ///   - message: what is wrong.
    public init(line: Int?, _ message: String) {
        self.line = line
        self.message = message
    }

    public var description: String { line.map { "line \($0): \(message)" } ?? message }
}
