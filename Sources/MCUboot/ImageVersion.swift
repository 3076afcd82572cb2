/// The version in an MCUboot image header (`struct image_version`): major, minor, revision and
/// build number.
///
/// ``description`` is the text SMP reports in `image list`: `"1.2.3"`, or `"1.2.3.7"` when the
/// build number is not zero (Zephyr's `img_mgmt_ver_str`). imgtool writes the same version as
/// `1.2.3+7` (see ``imgtoolDescription``). Ordering compares major, minor, revision and then
/// build, which is what MCUboot does with `MCUBOOT_VERSION_CMP_USE_BUILD_NUMBER`; without that
/// option the bootloader ignores the build number (compare ``withoutBuild`` values then).
public struct ImageVersion: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// `iv_major`.
    public var major: UInt8
    /// `iv_minor`.
    public var minor: UInt8
    /// `iv_revision`.
    public var revision: UInt16
    /// `iv_build_num`.
    public var build: UInt32

    /// Creates a version.
    /// - Parameters:
    ///   - major: major number.
    ///   - minor: minor number.
    ///   - revision: revision number.
    ///   - build: build number.
    public init(major: UInt8, minor: UInt8, revision: UInt16, build: UInt32 = 0) {
        self.major = major
        self.minor = minor
        self.revision = revision
        self.build = build
    }

    /// Parses `1`, `1.2`, `1.2.3`, `1.2.3+7` (imgtool and manifest.json) or `1.2.3.7` (SMP).
    /// - Parameter text: the version text; surrounding spaces are ignored.
    /// - Returns: `nil` if a part is missing, not a number, or too large for its field.
    public init?(_ text: some StringProtocol) {
        let trimmed = text.trimmingSpaces()
        var parts = trimmed.split(separator: "+", omittingEmptySubsequences: false)
        guard parts.count <= 2 else { return nil }
        let buildText = parts.count == 2 ? parts.removeLast() : nil
        var numbers = parts[0].split(separator: ".", omittingEmptySubsequences: false)
        var build: UInt32 = 0
        if let buildText {
            guard let value = UInt32(buildText) else { return nil }
            build = value
        } else if numbers.count == 4 {
            guard let value = UInt32(numbers.removeLast()) else { return nil }
            build = value
        }
        guard (1...3).contains(numbers.count) else { return nil }
        guard let major = UInt8(numbers[0]) else { return nil }
        let minor = numbers.count > 1 ? UInt8(numbers[1]) : 0
        let revision = numbers.count > 2 ? UInt16(numbers[2]) : 0
        guard let minor, let revision else { return nil }
        self.init(major: major, minor: minor, revision: revision, build: build)
    }

    /// The version as SMP reports it: `major.minor.revision`, plus `.build` when build ≠ 0.
    public var description: String {
        build == 0 ? "\(major).\(minor).\(revision)" : "\(major).\(minor).\(revision).\(build)"
    }

    /// The version as imgtool prints it: always `major.minor.revision+build`.
    public var imgtoolDescription: String { "\(major).\(minor).\(revision)+\(build)" }

    /// The same version with build number 0, for comparisons the way MCUboot makes them by default.
    public var withoutBuild: ImageVersion { ImageVersion(major: major, minor: minor, revision: revision) }

    /// The value imgtool's `--security-counter auto` derives: `major << 24 | minor << 16 | revision`.
    public var securityCounterValue: UInt32 { UInt32(major) << 24 | UInt32(minor) << 16 | UInt32(revision) }

    public static func < (lhs: ImageVersion, rhs: ImageVersion) -> Bool {
        (lhs.major, lhs.minor, lhs.revision, lhs.build) < (rhs.major, rhs.minor, rhs.revision, rhs.build)
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces, tabs and newlines.
    func trimmingSpaces() -> Substring {
        let text = Substring(self)
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let first = text.firstIndex(where: { !isSpace($0) }),
            let last = text.lastIndex(where: { !isSpace($0) })
        else { return "" }
        return text[first...last]
    }
}
