import Foundation

/// The `manifest.json` of a firmware zip, in every dialect the nRF Connect SDK (and tools that
/// imitate it) write.
///
/// Accepted variations: numbers written as JSON numbers, decimal strings or hex strings;
/// `load_address` as a bare hex literal (`"load_address": 0x10000`, which is not JSON and is
/// repaired before parsing); the image number as `image_index`, `image` or `partition`; the slot as
/// `slot` (string or number, taken modulo 2) or as `slot_index_primary`/`slot_index_secondary`
/// (1-based flash partition numbers); DirectXIP files marked with `version_MCUBOOT+XIP`.
public struct PackageManifest: Sendable, Hashable {
    /// One entry of `files`.
    public struct File: Sendable, Hashable {
        /// `file`: the file's name inside the zip (may contain spaces and folders).
        public var file: String
        /// `type`: `application`, `bin`, `mcuboot`, `suit-envelope`, `cache`, … (`nil` if absent).
        public var type: String?
        /// `image_index`, else `image`.
        public var imageIndex: Int?
        /// `partition` (SUIT cache partition number, or an image number in older packages).
        public var partition: Int?
        /// `slot`: the target slot as written (0 primary, 1 secondary; newer tools count on across images).
        public var slot: Int?
        /// `slot_index_primary`: 1-based partition number of the image's primary slot.
        public var slotIndexPrimary: Int?
        /// `slot_index_secondary`: 1-based partition number of the image's secondary slot.
        public var slotIndexSecondary: Int?
        /// `load_address`.
        public var loadAddress: UInt64?
        /// `version_MCUBOOT+XIP` or `version_MCUBOOT` (the former wins when both are present).
        public var mcubootVersion: String?
        /// Whether the entry has `version_MCUBOOT+XIP`: built for DirectXIP.
        public var isDirectXIP: Bool
        /// `version` (free-form, e.g. the network core's firmware version).
        public var version: String?
        /// `board`.
        public var board: String?
        /// `soc`.
        public var soc: String?
        /// `size` in bytes.
        public var size: Int?
        /// `modtime`, seconds since 1970.
        public var modificationTime: Int?
    }

    /// `format-version`.
    public var formatVersion: Int?
    /// `time`, seconds since 1970.
    public var time: Int?
    /// `name`, a label for people.
    public var name: String?
    /// `files`, in order.
    public var files: [File]

    /// Parses `manifest.json`.
    /// - Parameter json: the file's bytes.
    /// - Throws: ``MCUbootError`` ``MCUbootError/Code/invalidManifest`` naming the field at fault.
    public init(json: Data) throws(MCUbootError) {
        let text = Self.repairingHexLiterals(String(decoding: json, as: UTF8.self))
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: Data(text.utf8))
        } catch {
            throw MCUbootError(.invalidManifest, "manifest.json is not valid JSON")
        }
        guard let root = object as? [String: Any] else {
            throw MCUbootError(.invalidManifest, "manifest.json is not a JSON object")
        }
        guard let files = root["files"] as? [Any] else {
            throw MCUbootError(.invalidManifest, "manifest.json has no \"files\" array")
        }
        formatVersion = try Self.integer(root["format-version"], "format-version").map(Int.init)
        time = try Self.integer(root["time"], "time").map(Int.init)
        name = root["name"] as? String
        self.files = try files.enumerated().map { (index, item) throws(MCUbootError) in
            guard let entry = item as? [String: Any] else {
                throw MCUbootError(.invalidManifest, "files[\(index)] is not an object")
            }
            return try File(entry, index: index)
        }
    }

    /// Replaces bare hex literals outside strings (`0x1F000`) with their decimal value.
    static func repairingHexLiterals(_ text: String) -> String {
        var output = ""
        output.reserveCapacity(text.utf8.count)
        var inString = false
        var escaped = false
        var previous: Character = " "
        var characters = Array(text)
        var index = 0
        while index < characters.count {
            let c = characters[index]
            if inString {
                output.append(c)
                if escaped {
                    escaped = false
                } else if c == "\\" {
                    escaped = true
                } else if c == "\"" {
                    inString = false
                }
            } else if c == "\"" {
                inString = true
                output.append(c)
            } else if c == "0", index + 1 < characters.count,
                characters[index + 1] == "x" || characters[index + 1] == "X",
                !(previous.isLetter || previous.isNumber || previous == ".")
            {
                var end = index + 2
                while end < characters.count, characters[end].isHexDigit { end += 1 }
                if let value = UInt64(String(characters[(index + 2)..<end]), radix: 16) {
                    output += String(value)
                } else {
                    output += String(characters[index..<end])
                }
                index = end
                previous = "0"
                continue
            } else {
                output.append(c)
            }
            if !c.isWhitespace { previous = c }
            index += 1
        }
        characters.removeAll()
        return output
    }

    /// A non-negative integer from a JSON number, a decimal string or a `0x` hex string.
    static func integer(_ value: Any?, _ key: String) throws(MCUbootError) -> UInt64? {
        guard let value, !(value is NSNull) else { return nil }
        if let string = value as? String {
            let text = string.trimmingSpaces()
            if text.isEmpty { return nil }
            let parsed =
                text.lowercased().hasPrefix("0x") ? UInt64(text.dropFirst(2), radix: 16) : UInt64(text, radix: 10)
            guard let parsed else {
                throw MCUbootError(.invalidManifest, "\"\(key)\" is \"\(string)\", not a number")
            }
            return parsed
        }
        if let number = value as? NSNumber {
            let double = number.doubleValue
            guard double >= 0, double == double.rounded(), double < 1.8e19 else {
                throw MCUbootError(.invalidManifest, "\"\(key)\" is \(number), not a non-negative integer")
            }
            return number.uint64Value
        }
        throw MCUbootError(.invalidManifest, "\"\(key)\" is neither a number nor a string")
    }
}

extension PackageManifest.File {
    init(_ entry: [String: Any], index: Int) throws(MCUbootError) {
        guard let file = entry["file"] as? String, !file.isEmpty else {
            throw MCUbootError(.invalidManifest, "files[\(index)] has no \"file\" name")
        }
        func int(_ key: String) throws(MCUbootError) -> Int? {
            guard let value = try PackageManifest.integer(entry[key], "files[\(index)].\(key)") else { return nil }
            guard value <= UInt64(Int32.max) else {
                throw MCUbootError(.invalidManifest, "files[\(index)].\(key) is \(value), out of range")
            }
            return Int(value)
        }
        self.file = file
        type = entry["type"] as? String
        let imageIndex = try int("image_index")
        let image = try int("image")
        self.imageIndex = imageIndex ?? image
        partition = try int("partition")
        slot = try int("slot")
        slotIndexPrimary = try int("slot_index_primary")
        slotIndexSecondary = try int("slot_index_secondary")
        loadAddress = try PackageManifest.integer(entry["load_address"], "files[\(index)].load_address")
        let xip = entry["version_MCUBOOT+XIP"] as? String
        isDirectXIP = xip != nil
        mcubootVersion = xip ?? entry["version_MCUBOOT"] as? String
        version = (entry["version"] as? String) ?? (entry["version"] as? NSNumber).map { "\($0)" }
        board = entry["board"] as? String
        soc = entry["soc"] as? String
        size = try int("size")
        modificationTime = try int("modtime")
    }
}
