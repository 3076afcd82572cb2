/// An SMP management group id.
///
/// An open set: a device may answer with any 16-bit group, and application groups start at 64,
/// so this is a struct with named constants rather than a closed enum.
public struct SMPGroup: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt16
    /// Creates a group from its id.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// 0: OS / default management (echo, reset, params, info…).
    public static let os = SMPGroup(rawValue: 0)
    /// 1: image management (state, upload, erase, slot info).
    public static let image = SMPGroup(rawValue: 1)
    /// 2: statistics.
    public static let statistics = SMPGroup(rawValue: 2)
    /// 3: settings (called "config" in Mynewt).
    public static let settings = SMPGroup(rawValue: 3)
    /// 4: log (Mynewt only).
    public static let log = SMPGroup(rawValue: 4)
    /// 5: crash (Mynewt only).
    public static let crash = SMPGroup(rawValue: 5)
    /// 6: split image (unused by Zephyr).
    public static let split = SMPGroup(rawValue: 6)
    /// 7: run-time tests (Mynewt only).
    public static let run = SMPGroup(rawValue: 7)
    /// 8: file system.
    public static let fileSystem = SMPGroup(rawValue: 8)
    /// 9: shell.
    public static let shell = SMPGroup(rawValue: 9)
    /// 10: enumeration of supported groups.
    public static let enumeration = SMPGroup(rawValue: 10)
    /// 11: transport bridging (experimental in Zephyr).
    public static let transport = SMPGroup(rawValue: 11)
    /// 63: Zephyr basic (storage erase).
    public static let zephyrBasic = SMPGroup(rawValue: 63)
    /// 64: first application-defined group.
    public static let perUser = SMPGroup(rawValue: 64)
    /// 66: SUIT (nRF Connect SDK; the id Nordic's mobile libraries use).
    public static let suit = SMPGroup(rawValue: 66)

    /// Short lowercase name, e.g. `image`, or `group 77` for an unknown id.
    public var name: String {
        SMPGroup.names[self] ?? (rawValue >= 64 ? "user group \(rawValue)" : "group \(rawValue)")
    }

    public var description: String { name }

    private static let names: [SMPGroup: String] = [
        .os: "os", .image: "image", .statistics: "stat", .settings: "settings", .log: "log", .crash: "crash",
        .split: "split", .run: "run", .fileSystem: "fs", .shell: "shell", .enumeration: "enum",
        .transport: "transport", .zephyrBasic: "basic", .suit: "suit",
    ]

    /// The names of this group's SMP v2 return codes, indexed by value, for groups that define them.
    ///
    /// This is the one place that lists the groups with error tables; each table lives in its
    /// group's file.
    public var returnCodeNames: [String]? {
        switch self {
        case .os: OSManagement.returnCodeNames
        case .image: ImageManagement.returnCodeNames
        case .statistics: StatisticsManagement.returnCodeNames
        case .settings: SettingsManagement.returnCodeNames
        case .fileSystem: FileManagement.returnCodeNames
        case .shell: ShellManagement.returnCodeNames
        case .enumeration: EnumerationManagement.returnCodeNames
        case .transport: TransportManagement.returnCodeNames
        case .zephyrBasic: ZephyrBasicManagement.returnCodeNames
        case .suit: SUITManagement.returnCodeNames
        case .log: LogManagement.returnCodeNames
        case .crash: CrashManagement.returnCodeNames
        case .run: RunManagement.returnCodeNames
        default: nil
        }
    }
}
