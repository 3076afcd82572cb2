import Foundation

/// OS ("default") management, group 0: echo, console echo, task and memory statistics, the clock,
/// reset, buffer parameters, application and bootloader information.
///
/// Spec: `smp-protocol.md` §4 (commands) and §3.4 (`os_mgmt_err_code_t`). Every command answers
/// either its success map or an error envelope (v1 `rc` or v2 `err {group: 0, rc}`), which
/// ``SMPFrame/decodeResponse(to:)`` turns into ``SMPDeviceError`` before a `Response` is decoded.
///
/// Peers differ in two places, and these types follow the device (Zephyr) rather than a client:
/// - ``Reset/force`` is a CBOR Boolean: Zephyr decodes it with `zcbor_bool_decode` and Nordic's
///   libraries send `true`, while the `smp` package sends the integer `1` (which Zephyr fails to
///   decode and then ignores). Decoding accepts both.
/// - Memory-pool statistics arrive under `mpools` (Mynewt, Zephyr), although the Zephyr
///   documentation shows the pools at the top level; decoding accepts both shapes.
public enum OSManagement: SMPManagementGroup {
    /// Group 0.
    public static let group = SMPGroup.os

    /// `os_mgmt_err_code_t` names without the `OS_MGMT_ERR_` prefix, by value.
    public static let returnCodeNames = [
        "OK", "UNKNOWN", "INVALID_FORMAT", "QUERY_YIELDS_NO_ANSWER", "RTC_NOT_SET", "RTC_COMMAND_FAILED",
        "QUERY_RESPONSE_VALUE_NOT_VALID", "HEAP_STATS_FETCH_FAILED",
    ]

    /// This group's SMP v2 return code (`err.rc` when `err.group` is 0).
    public typealias ReturnCode = SMPGroupReturnCode<OSManagement>

    // MARK: - 0 echo

    /// Command 0, echo: the device answers with the same text. Used as a ping and to measure
    /// round trips.
    ///
    /// Sent as a write here (as every peer does); Zephyr also accepts it as a read.
    public struct Echo: SMPWriteRequest, Hashable {
        public static var group: SMPGroup { .os }
        public static var command: UInt8 { 0 }

        /// The text to echo (wire key `d`, required). Its length is limited by the device's
        /// buffer (`buf_size` of ``MCUmgrParameters``).
        public var text: String

        /// Creates an echo request.
        /// - Parameter text: the text the device should send back.
        public init(text: String) { self.text = text }

        enum CodingKeys: String, CodingKey { case text = "d" }

        /// The echoed text.
        public struct Response: Codable, Sendable, Hashable {
            /// The text received (wire key `r`, always present).
            public var text: String

            /// Creates a response.
            /// - Parameter text: the echoed text.
            public init(text: String) { self.text = text }

            enum CodingKeys: String, CodingKey { case text = "r" }
        }
    }

    // MARK: - 1 console echo control

    /// Command 1, console echo control: turns echoing of the serial console's input on or off.
    ///
    /// Mynewt only; Zephyr does not implement it (answers `ENOTSUP`), and MCUboot serial recovery
    /// answers success without doing anything.
    public struct ConsoleEchoControl: SMPWriteRequest, Hashable {
        public static var group: SMPGroup { .os }
        public static var command: UInt8 { 1 }

        /// 1 to echo console input, 0 to stop (wire key `echo`, an integer, required by Mynewt).
        public var echo: Int

        /// Creates a console echo request.
        /// - Parameter echo: 1 to enable, 0 to disable.
        public init(echo: Int) { self.echo = echo }

        /// Success carries no fields.
        public typealias Response = SMPEmptyResponse
    }

    // MARK: - 2 task statistics

    /// Command 2, task statistics: one entry per thread.
    public struct TaskStatistics: SMPReadRequest, Hashable {
        public static var group: SMPGroup { .os }
        public static var command: UInt8 { 2 }

        /// Creates the request (an empty map).
        public init() {}

        /// Statistics of one task (a Zephyr thread).
        ///
        /// With `CONFIG_MCUMGR_GRP_OS_TASKSTAT_ONLY_SUPPORTED_STATS` Zephyr omits the fields it
        /// cannot fill, so only priority, id and state are guaranteed.
        public struct Task: Codable, Sendable, Hashable {
            /// Scheduling priority (wire key `prio`, always present).
            public var priority: Int
            /// Numeric task id (wire key `tid`, always present).
            public var id: UInt64
            /// Numeric task state, RTOS specific (wire key `state`, always present).
            public var state: UInt64
            /// Stack size, in 4-byte words on Zephyr (wire key `stksiz`, optional).
            public var stackSize: UInt64?
            /// Stack used, in 4-byte words on Zephyr (wire key `stkuse`, optional).
            public var stackUsed: UInt64?
            /// Run time in ticks (wire key `runtime`, optional).
            public var runtime: UInt64?
            /// Number of context switches (wire key `cswcnt`, optional).
            public var contextSwitches: UInt64?
            /// Last watchdog check-in; always 0 on Zephyr (wire key `last_checkin`, optional).
            public var lastCheckin: UInt64?
            /// Next watchdog check-in; always 0 on Zephyr (wire key `next_checkin`, optional).
            public var nextCheckin: UInt64?

            /// Creates task statistics.
            public init(
                priority: Int,
                id: UInt64,
                state: UInt64,
                stackUsed: UInt64? = nil,
                stackSize: UInt64? = nil,
                contextSwitches: UInt64? = nil,
                runtime: UInt64? = nil,
                lastCheckin: UInt64? = nil,
                nextCheckin: UInt64? = nil
            ) {
                self.priority = priority
                self.id = id
                self.state = state
                self.stackUsed = stackUsed
                self.stackSize = stackSize
                self.contextSwitches = contextSwitches
                self.runtime = runtime
                self.lastCheckin = lastCheckin
                self.nextCheckin = nextCheckin
            }

            // Encoded in the order Zephyr's `os_mgmt.c` writes the fields (stack size before
            // stack use, run time before context switches), so a simulated device answers
            // byte for byte as Zephyr does; decoding takes any order.
            enum CodingKeys: String, CodingKey {
                case priority = "prio"
                case id = "tid"
                case state
                case stackSize = "stksiz"
                case stackUsed = "stkuse"
                case runtime
                case contextSwitches = "cswcnt"
                case lastCheckin = "last_checkin"
                case nextCheckin = "next_checkin"
            }
        }

        /// The task table.
        public struct Response: Codable, Sendable, Hashable {
            /// Task name → statistics, in the device's order (wire key `tasks`, always present).
            public var tasks: SMPNamedValues<Task>

            /// Creates a response.
            /// - Parameter tasks: the task table.
            public init(tasks: SMPNamedValues<Task>) { self.tasks = tasks }
        }
    }

    // MARK: - 3 memory pool statistics

    /// Command 3, memory pool statistics. Zephyr reports its heaps as pools of 1-byte blocks.
    public struct MemoryPoolStatistics: SMPReadRequest, Hashable {
        public static var group: SMPGroup { .os }
        public static var command: UInt8 { 3 }

        /// Creates the request (an empty map).
        public init() {}

        /// One memory pool.
        public struct Pool: Codable, Sendable, Hashable {
            /// Block size in bytes; 1 for a Zephyr heap (wire key `blksiz`, omitted by Zephyr with
            /// `…MPSTAT_ONLY_SUPPORTED_STATS`). The `smp` package spells it `blksize`.
            public var blockSize: UInt64?
            /// Number of blocks (wire key `nblks`, always present).
            public var blockCount: UInt64
            /// Number of free blocks (wire key `nfree`, always present).
            public var freeBlocks: UInt64
            /// Lowest number of free blocks seen (wire key `min`, absent from Mynewt).
            public var minimumFreeBlocks: UInt64?

            /// Creates pool statistics.
            public init(
                blockSize: UInt64? = nil,
                blockCount: UInt64,
                freeBlocks: UInt64,
                minimumFreeBlocks: UInt64? = nil
            ) {
                self.blockSize = blockSize
                self.blockCount = blockCount
                self.freeBlocks = freeBlocks
                self.minimumFreeBlocks = minimumFreeBlocks
            }

            enum CodingKeys: String, CodingKey {
                case blockSize = "blksiz"
                case blockCount = "nblks"
                case freeBlocks = "nfree"
                case minimumFreeBlocks = "min"
            }
        }

        /// The pool table.
        public struct Response: Codable, Sendable, Hashable {
            /// Pool name → statistics, in the device's order (wire key `mpools`). Encoded under
            /// `mpools`; when decoding, a payload without `mpools` is read the way the Zephyr
            /// documentation draws it, every map-valued top-level entry being a pool.
            public var pools: SMPNamedValues<Pool>

            /// Creates a response.
            /// - Parameter pools: the pool table.
            public init(pools: SMPNamedValues<Pool>) { self.pools = pools }

            enum CodingKeys: String, CodingKey { case pools = "mpools" }

            /// Decodes the value from its wire form (see the type and field documentation).
            public init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                if container.contains(.pools) {
                    pools = try container.decode(SMPNamedValues<Pool>.self, forKey: .pools)
                    return
                }
                let top = try decoder.container(keyedBy: SMPNameKey.self)
                var pools = SMPNamedValues<Pool>()
                for key in top.allKeys {
                    // Skip envelope keys such as `rc`; a pool is a map.
                    if let pool = try? top.decode(Pool.self, forKey: key) {
                        pools.entries.append(.init(name: key.stringValue, value: pool))
                    }
                }
                self.pools = pools
            }
        }
    }

    // MARK: - 4 date and time

    /// Command 4 read: the device's real-time clock.
    public struct DateTimeRead: SMPReadRequest, Hashable {
        public static var group: SMPGroup { .os }
        public static var command: UInt8 { 4 }

        /// Creates the request (an empty map).
        public init() {}

        /// The clock value.
        public struct Response: Codable, Sendable, Hashable {
            /// Date and time as text, `yyyy-MM-dd'T'HH:mm:ss.SSSSSSZZZZZ` (wire key `datetime`,
            /// always present; Zephyr may omit the fraction and the zone).
            public var dateTime: String

            /// Creates a response.
            /// - Parameter dateTime: the date-time text.
            public init(dateTime: String) { self.dateTime = dateTime }

            enum CodingKeys: String, CodingKey { case dateTime = "datetime" }
        }
    }

    /// Command 4 write: sets the device's real-time clock.
    public struct DateTimeWrite: SMPWriteRequest, Hashable {
        public static var group: SMPGroup { .os }
        public static var command: UInt8 { 4 }

        /// The new date and time, `yyyy-MM-dd'T'HH:mm:ss[.SSSSSS][ZZZZZ]` (wire key `datetime`,
        /// required). A malformed value is refused with `INVALID_FORMAT`.
        public var dateTime: String

        /// Creates the request.
        /// - Parameter dateTime: the date-time text.
        public init(dateTime: String) { self.dateTime = dateTime }

        enum CodingKeys: String, CodingKey { case dateTime = "datetime" }

        /// Success carries no fields.
        public typealias Response = SMPEmptyResponse
    }

    // MARK: - 5 reset

    /// Command 5, system reset. The device answers first, then resets; an application hook may
    /// refuse (v1 `EBUSY` or a hook-defined v2 code).
    public struct Reset: SMPWriteRequest, Hashable {
        /// Never sent again automatically: a second reset during a test swap can revert the upgrade.
        public var isIdempotent: Bool { false }

        public static var group: SMPGroup { .os }
        public static var command: UInt8 { 5 }

        /// Reset even if an application hook refused an earlier attempt (wire key `force`,
        /// optional, a CBOR Boolean as Zephyr decodes it; the integers 0 and 1 that the `smp`
        /// package sends are accepted when decoding).
        public var force: Bool?
        /// Boot mode to store in retention before resetting, e.g. 1 to stay in the bootloader for
        /// serial recovery (wire key `boot_mode`, optional, 0–255; Zephyr ≥ 4.2 with
        /// `CONFIG_MCUMGR_GRP_OS_RESET_BOOT_MODE`).
        public var bootMode: UInt8?

        /// Creates a reset request.
        /// - Parameters:
        ///   - force: force the reset past an application hook.
        ///   - bootMode: the retention boot mode to set.
        public init(force: Bool? = nil, bootMode: UInt8? = nil) {
            self.force = force
            self.bootMode = bootMode
        }

        enum CodingKeys: String, CodingKey {
            case force
            case bootMode = "boot_mode"
        }

        /// Decodes the value from its wire form (see the type and field documentation).
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            if container.contains(.force) {
                if let flag = try? container.decode(Bool.self, forKey: .force) {
                    force = flag
                } else {
                    force = try container.decode(Int.self, forKey: .force) != 0
                }
            }
            bootMode = try container.decodeIfPresent(UInt8.self, forKey: .bootMode)
        }

        /// The retention boot mode value that keeps the device in its bootloader.
        public static let bootloaderMode: UInt8 = 1

        /// Success carries no fields.
        public typealias Response = SMPEmptyResponse
    }

    // MARK: - 6 MCUmgr parameters

    /// Command 6, MCUmgr parameters: the size and number of the device's SMP buffers.
    public struct MCUmgrParameters: SMPReadRequest, Hashable {
        public static var group: SMPGroup { .os }
        public static var command: UInt8 { 6 }

        /// Creates the request (an empty map).
        public init() {}

        /// The buffer parameters.
        public struct Response: Codable, Sendable, Hashable {
            /// Size in bytes of one SMP buffer, header and CBOR included; the largest request the
            /// device can take (wire key `buf_size`, always present).
            public var bufferSize: UInt32
            /// Number of SMP buffers (wire key `buf_count`, always present).
            public var bufferCount: UInt32

            /// Creates a response.
            /// - Parameters:
            ///   - bufferSize: bytes per buffer.
            ///   - bufferCount: number of buffers.
            public init(bufferSize: UInt32, bufferCount: UInt32) {
                self.bufferSize = bufferSize
                self.bufferCount = bufferCount
            }

            enum CodingKeys: String, CodingKey {
                case bufferSize = "buf_size"
                case bufferCount = "buf_count"
            }
        }
    }

    // MARK: - 7 application info

    /// Command 7, OS/application information, in the manner of `uname`.
    public struct ApplicationInfo: SMPReadRequest, Hashable {
        public static var group: SMPGroup { .os }
        public static var command: UInt8 { 7 }

        /// Specifier letters (wire key `format`, optional; the device defaults to `s`): `s` kernel
        /// name, `n` node name, `r` kernel release, `v` kernel version, `b` build date and time,
        /// `m` machine, `p` processor, `i` hardware platform, `o` operating system, `a` all.
        /// Fields come out in that fixed order whatever the order of the letters. An unknown
        /// letter is refused with `INVALID_FORMAT`.
        public var format: String?

        /// Creates the request.
        /// - Parameter format: the specifier letters, or `nil` for the device's default.
        public init(format: String? = nil) { self.format = format }

        /// The information text.
        public struct Response: Codable, Sendable, Hashable {
            /// The requested fields separated by spaces (wire key `output`, always present).
            public var output: String

            /// Creates a response.
            /// - Parameter output: the text.
            public init(output: String) { self.output = output }
        }
    }

    // MARK: - 8 bootloader info

    /// Command 8, bootloader information: its name, or the answer to a query such as `mode`.
    public struct BootloaderInfo: SMPReadRequest, Hashable {
        public static var group: SMPGroup { .os }
        public static var command: UInt8 { 8 }

        /// What to ask the bootloader (wire key `query`, optional). Without it the device names its
        /// bootloader; MCUboot answers `mode`; an unknown query is refused with
        /// `QUERY_YIELDS_NO_ANSWER`.
        public var query: String?

        /// Creates the request.
        /// - Parameter query: the query, or `nil` for the bootloader's name.
        public init(query: String? = nil) { self.query = query }

        /// The answer; which fields are present depends on the query.
        public struct Response: Codable, Sendable, Hashable {
            /// The bootloader's name, e.g. `MCUboot` (wire key `bootloader`, present when no query
            /// was sent).
            public var bootloader: String?
            /// MCUboot's upgrade mode (wire key `mode`, present for the `mode` query).
            public var mode: MCUbootMode?
            /// Whether MCUboot refuses downgrades (wire key `no-downgrade`, `mode` query; sent only
            /// when true).
            public var noDowngrade: Bool?

            /// Creates a response.
            public init(bootloader: String? = nil, mode: MCUbootMode? = nil, noDowngrade: Bool? = nil) {
                self.bootloader = bootloader
                self.mode = mode
                self.noDowngrade = noDowngrade
            }

            enum CodingKeys: String, CodingKey {
                case bootloader, mode
                case noDowngrade = "no-downgrade"
            }
        }
    }

    /// MCUboot's upgrade mode (`enum mcuboot_mode`), as reported by the `mode` bootloader query.
    ///
    /// An open set: a newer MCUboot may report values this list lacks.
    public struct MCUbootMode: RawRepresentable, Codable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: Int
        /// Creates a mode from its value.
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// −1: unknown.
        public static let unknown = MCUbootMode(rawValue: -1)
        /// 0: single application slot.
        public static let singleApplication = MCUbootMode(rawValue: 0)
        /// 1: swap using scratch.
        public static let swapUsingScratch = MCUbootMode(rawValue: 1)
        /// 2: overwrite only (upgrade only).
        public static let overwriteOnly = MCUbootMode(rawValue: 2)
        /// 3: swap without scratch (swap using move).
        public static let swapUsingMove = MCUbootMode(rawValue: 3)
        /// 4: DirectXIP without revert.
        public static let directXIP = MCUbootMode(rawValue: 4)
        /// 5: DirectXIP with revert.
        public static let directXIPWithRevert = MCUbootMode(rawValue: 5)
        /// 6: RAM loader.
        public static let ramLoad = MCUbootMode(rawValue: 6)
        /// 7: firmware loader.
        public static let firmwareLoader = MCUbootMode(rawValue: 7)
        /// 8: single-slot RAM load.
        public static let singleSlotRAMLoad = MCUbootMode(rawValue: 8)
        /// 9: swap using offset.
        public static let swapUsingOffset = MCUbootMode(rawValue: 9)

        public var description: String {
            let names = [
                "unknown", "single application", "swap using scratch", "overwrite only", "swap using move",
                "DirectXIP", "DirectXIP with revert", "RAM load", "firmware loader", "single-slot RAM load",
                "swap using offset",
            ]
            let index = rawValue + 1
            return index >= 0 && index < names.count ? names[index] : "mode \(rawValue)"
        }
    }
}

extension SMPGroupReturnCode where Group == OSManagement {
    /// 0 OK: success.
    public static var ok: Self { Self(rawValue: 0) }
    /// 1 UNKNOWN: unknown error.
    public static var unknown: Self { Self(rawValue: 1) }
    /// 2 INVALID_FORMAT: the provided format value (application info, date-time) is not valid.
    public static var invalidFormat: Self { Self(rawValue: 2) }
    /// 3 QUERY_YIELDS_NO_ANSWER: the bootloader query was not recognised.
    public static var queryYieldsNoAnswer: Self { Self(rawValue: 3) }
    /// 4 RTC_NOT_SET: the real-time clock has not been set.
    public static var rtcNotSet: Self { Self(rawValue: 4) }
    /// 5 RTC_COMMAND_FAILED: the real-time clock command failed.
    public static var rtcCommandFailed: Self { Self(rawValue: 5) }
    /// 6 QUERY_RESPONSE_VALUE_NOT_VALID: the query was recognised but has no valid answer.
    public static var queryResponseValueNotValid: Self { Self(rawValue: 6) }
    /// 7 HEAP_STATS_FETCH_FAILED: reading the heap statistics failed.
    public static var heapStatsFetchFailed: Self { Self(rawValue: 7) }
}
