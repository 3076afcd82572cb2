// BlueZ and D-Bus: Linux only (SMP_BLUEZ is defined for Linux in Package.swift).
#if SMP_BLUEZ
    /// A validated object path: `/`, or `/` followed by elements of `[A-Za-z0-9_]`, no empty element,
    /// no trailing slash.
    public struct DBusObjectPath: Sendable, Hashable, Comparable, CustomStringConvertible, ExpressibleByStringLiteral {
        /// The path.
        public let rawValue: String

        /// The root path `/`.
        public static let root = DBusObjectPath(unchecked: "/")

        /// Validates a path.
        /// - Parameter text: the path.
        /// - Throws: ``DBusError`` `.invalidName`.
        public init(_ text: String) throws(DBusError) {
            guard DBusNames.isObjectPath(Array(text.utf8)) else {
                throw DBusError(.invalidName, "'\(text)' is not an object path")
            }
            rawValue = text
        }

        init(unchecked text: String) { rawValue = text }

        /// Creates a path from a literal; a malformed literal is a programming error.
        public init(stringLiteral value: String) {
            precondition(DBusNames.isObjectPath(Array(value.utf8)), "invalid object path literal '\(value)'")
            rawValue = value
        }

        /// A child path.
        /// - Parameter element: one element of `[A-Za-z0-9_]`.
        /// - Returns: the child.
        /// - Throws: ``DBusError`` `.invalidName` when the element is not valid.
        public func appending(_ element: String) throws(DBusError) -> DBusObjectPath {
            try DBusObjectPath(rawValue == "/" ? "/" + element : rawValue + "/" + element)
        }

        /// Whether `self` is `other` or below it.
        /// - Parameter other: the possible ancestor.
        /// - Returns: `true` for the path itself and its descendants.
        public func isDescendant(of other: DBusObjectPath) -> Bool {
            other.rawValue == "/" || rawValue == other.rawValue || rawValue.hasPrefix(other.rawValue + "/")
        }

        public static func < (lhs: DBusObjectPath, rhs: DBusObjectPath) -> Bool { lhs.rawValue < rhs.rawValue }

        public var description: String { rawValue }
    }

    /// The specification's rules for names (interface, member, error and bus names).
    public enum DBusNames {
        /// The longest name of any kind.
        public static let maximumLength = 255

        static func isObjectPath(_ bytes: [UInt8]) -> Bool {
            guard bytes.first == UInt8(ascii: "/") else { return false }
            if bytes.count == 1 { return true }
            var previousSlash = true
            for byte in bytes.dropFirst() {
                if byte == UInt8(ascii: "/") {
                    if previousSlash { return false }
                    previousSlash = true
                } else if isElementByte(byte) {
                    previousSlash = false
                } else {
                    return false
                }
            }
            return !previousSlash
        }

        /// `a.b` with at least two elements of `[A-Za-z_][A-Za-z0-9_]*` (also `-` for bus names).
        /// - Parameter name: the name.
        /// - Returns: whether it is a valid interface (or error) name.
        public static func isInterfaceName(_ name: String) -> Bool {
            dottedName(Array(name.utf8), allowHyphen: false, allowDigitStart: false)
        }

        /// One element of `[A-Za-z_][A-Za-z0-9_]*`, at most 255 bytes.
        /// - Parameter name: the name.
        /// - Returns: whether it is a valid member name.
        public static func isMemberName(_ name: String) -> Bool {
            let bytes = Array(name.utf8)
            guard !bytes.isEmpty, bytes.count <= maximumLength, !isDigit(bytes[0]) else { return false }
            return bytes.allSatisfy(isElementByte)
        }

        /// A unique name (`:1.42`) or a well-known name (`org.bluez`).
        /// - Parameter name: the name.
        /// - Returns: whether it is a valid bus name.
        public static func isBusName(_ name: String) -> Bool {
            let bytes = Array(name.utf8)
            if bytes.first == UInt8(ascii: ":") {
                return dottedName(
                    Array(bytes.dropFirst()),
                    allowHyphen: true,
                    allowDigitStart: true,
                    limit: maximumLength - 1
                )
            }
            return dottedName(bytes, allowHyphen: true, allowDigitStart: false)
        }

        private static func dottedName(
            _ bytes: [UInt8],
            allowHyphen: Bool,
            allowDigitStart: Bool,
            limit: Int = maximumLength
        ) -> Bool {
            guard !bytes.isEmpty, bytes.count <= limit else { return false }
            let elements = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
            guard elements.count >= 2 else { return false }
            for element in elements {
                guard let first = element.first else { return false }
                if !allowDigitStart && isDigit(first) { return false }
                for byte in element where !(isElementByte(byte) || (allowHyphen && byte == UInt8(ascii: "-"))) {
                    return false
                }
            }
            return true
        }

        private static func isDigit(_ byte: UInt8) -> Bool { (48...57).contains(byte) }

        private static func isElementByte(_ byte: UInt8) -> Bool {
            (65...90).contains(byte) || (97...122).contains(byte) || isDigit(byte) || byte == UInt8(ascii: "_")
        }
    }
#endif
