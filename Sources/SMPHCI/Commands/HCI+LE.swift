import SMPBytes

// Scanning, connecting and disconnecting (Core Vol 4 Part E 7.1.6 and 7.8).

/// Passive or active scanning. An open set.
public struct LEScanType: RawRepresentable, Sendable, Hashable {
    public let rawValue: UInt8
    /// Creates a scan type from its value.
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// 0x00: listen only; no scan requests, so no scan responses.
    public static let passive = LEScanType(rawValue: 0x00)
    /// 0x01: send scan requests to scannable advertisers and report their scan responses.
    public static let active = LEScanType(rawValue: 0x01)
}

extension HCI {
    /// LE Set Scan Parameters (7.8.10), for legacy scanning.
    public struct LESetScanParameters: HCICommand {
        public static let opcode = HCIOpcode.leSetScanParameters
        public static let name = "LE Set Scan Parameters"
        /// LE_Scan_Type.
        public var scanType: LEScanType
        /// LE_Scan_Interval, in units of 0.625 ms (0x0004 to 0x4000).
        public var interval: UInt16
        /// LE_Scan_Window, in units of 0.625 ms; at most the interval.
        public var window: UInt16
        /// Own_Address_Type: the address the scan requests come from.
        public var ownAddressType: LEAddressType
        /// Scanning_Filter_Policy (0x00: every advertiser).
        public var filterPolicy: UInt8

        /// Creates the command.
        public init(
            scanType: LEScanType,
            interval: UInt16,
            window: UInt16,
            ownAddressType: LEAddressType,
            filterPolicy: UInt8 = 0
        ) {
            self.scanType = scanType
            self.interval = interval
            self.window = window
            self.ownAddressType = ownAddressType
            self.filterPolicy = filterPolicy
        }

        public init(parameters: [UInt8]) throws(HCIError) {
            var reader = HCIParameterReader(parameters, packet: Self.name)
            scanType = LEScanType(rawValue: try reader.readUInt8("LE_Scan_Type"))
            interval = try reader.readUInt16("LE_Scan_Interval")
            window = try reader.readUInt16("LE_Scan_Window")
            ownAddressType = LEAddressType(rawValue: try reader.readUInt8("Own_Address_Type"))
            filterPolicy = try reader.readUInt8("Scanning_Filter_Policy")
            try reader.expectEnd()
        }

        public func writeParameters(to writer: inout ByteWriter) {
            writer.writeByte(scanType.rawValue)
            writer.writeInteger(interval, endianness: .little)
            writer.writeInteger(window, endianness: .little)
            writer.writeByte(ownAddressType.rawValue)
            writer.writeByte(filterPolicy)
        }
    }

    /// LE Set Scan Enable (7.8.11), for legacy scanning.
    public struct LESetScanEnable: HCICommand {
        public static let opcode = HCIOpcode.leSetScanEnable
        public static let name = "LE Set Scan Enable"
        /// LE_Scan_Enable.
        public var enable: Bool
        /// Filter_Duplicates: report each advertiser once until scanning is enabled again.
        public var filterDuplicates: Bool

        /// Creates the command.
        public init(enable: Bool, filterDuplicates: Bool) {
            self.enable = enable
            self.filterDuplicates = filterDuplicates
        }

        public init(parameters: [UInt8]) throws(HCIError) {
            var reader = HCIParameterReader(parameters, packet: Self.name)
            enable = try readBool(&reader, "LE_Scan_Enable", packet: Self.name)
            filterDuplicates = try readBool(&reader, "Filter_Duplicates", packet: Self.name)
            try reader.expectEnd()
        }

        public func writeParameters(to writer: inout ByteWriter) {
            writer.writeByte(enable ? 1 : 0)
            writer.writeByte(filterDuplicates ? 1 : 0)
        }
    }

    /// LE Set Extended Scan Parameters (7.8.64), for controllers with extended advertising.
    public struct LESetExtendedScanParameters: HCICommand {
        public static let opcode = HCIOpcode.leSetExtendedScanParameters
        public static let name = "LE Set Extended Scan Parameters"

        /// A PHY on which to scan. An open set.
        public struct PHY: RawRepresentable, Sendable, Hashable {
            public let rawValue: UInt8
            /// Creates a PHY from its bit number in Scanning_PHYs.
            public init(rawValue: UInt8) { self.rawValue = rawValue }
            /// Bit 0: LE 1M.
            public static let le1M = PHY(rawValue: 0)
            /// Bit 2: LE Coded.
            public static let leCoded = PHY(rawValue: 2)
        }

        /// The scan of one PHY.
        public struct PHYScan: Sendable, Hashable {
            /// The PHY.
            public var phy: PHY
            /// Scan_Type.
            public var scanType: LEScanType
            /// Scan_Interval, in units of 0.625 ms.
            public var interval: UInt16
            /// Scan_Window, in units of 0.625 ms.
            public var window: UInt16

            /// Creates the scan of one PHY.
            public init(phy: PHY, scanType: LEScanType, interval: UInt16, window: UInt16) {
                self.phy = phy
                self.scanType = scanType
                self.interval = interval
                self.window = window
            }
        }

        /// Own_Address_Type.
        public var ownAddressType: LEAddressType
        /// Scanning_Filter_Policy (0x00: every advertiser).
        public var filterPolicy: UInt8
        /// One scan per PHY, in the order of their bits (LE 1M before LE Coded).
        public var scans: [PHYScan]

        /// Creates the command.
        /// - Parameters:
        ///   - ownAddressType: the address scan requests come from.
        ///   - filterPolicy: the scanning filter policy.
        ///   - scans: one per PHY; they are written in the order of their bits, and a PHY given
        ///     twice counts once.
        public init(ownAddressType: LEAddressType, filterPolicy: UInt8 = 0, scans: [PHYScan]) {
            self.ownAddressType = ownAddressType
            self.filterPolicy = filterPolicy
            var seen: Set<UInt8> = []
            self.scans = scans.filter { $0.phy.rawValue < 8 && seen.insert($0.phy.rawValue).inserted }
                .sorted { $0.phy.rawValue < $1.phy.rawValue }
        }

        public init(parameters: [UInt8]) throws(HCIError) {
            var reader = HCIParameterReader(parameters, packet: Self.name)
            ownAddressType = LEAddressType(rawValue: try reader.readUInt8("Own_Address_Type"))
            filterPolicy = try reader.readUInt8("Scanning_Filter_Policy")
            let phys = try reader.readUInt8("Scanning_PHYs")
            var scans: [PHYScan] = []
            for bit in UInt8(0)..<8 where phys & (1 << bit) != 0 {
                scans.append(
                    PHYScan(
                        phy: PHY(rawValue: bit),
                        scanType: LEScanType(rawValue: try reader.readUInt8("Scan_Type[\(scans.count)]")),
                        interval: try reader.readUInt16("Scan_Interval[\(scans.count)]"),
                        window: try reader.readUInt16("Scan_Window[\(scans.count)]")
                    )
                )
            }
            self.scans = scans
            try reader.expectEnd()
        }

        public func writeParameters(to writer: inout ByteWriter) {
            writer.writeByte(ownAddressType.rawValue)
            writer.writeByte(filterPolicy)
            writer.writeByte(scans.reduce(0) { $0 | (1 << ($1.phy.rawValue & 7)) })
            for scan in scans {
                writer.writeByte(scan.scanType.rawValue)
                writer.writeInteger(scan.interval, endianness: .little)
                writer.writeInteger(scan.window, endianness: .little)
            }
        }
    }

    /// LE Set Extended Scan Enable (7.8.65).
    public struct LESetExtendedScanEnable: HCICommand {
        public static let opcode = HCIOpcode.leSetExtendedScanEnable
        public static let name = "LE Set Extended Scan Enable"
        /// Enable.
        public var enable: Bool
        /// Filter_Duplicates: 0x00 off, 0x01 on, 0x02 on and reset each scan period.
        public var filterDuplicates: UInt8
        /// Duration, in units of 10 ms (0: until disabled).
        public var duration: UInt16
        /// Period, in units of 1.28 s (0: scan once).
        public var period: UInt16

        /// Creates the command.
        public init(enable: Bool, filterDuplicates: UInt8, duration: UInt16 = 0, period: UInt16 = 0) {
            self.enable = enable
            self.filterDuplicates = filterDuplicates
            self.duration = duration
            self.period = period
        }

        public init(parameters: [UInt8]) throws(HCIError) {
            var reader = HCIParameterReader(parameters, packet: Self.name)
            enable = try readBool(&reader, "Enable", packet: Self.name)
            filterDuplicates = try reader.readUInt8("Filter_Duplicates")
            duration = try reader.readUInt16("Duration")
            period = try reader.readUInt16("Period")
            try reader.expectEnd()
        }

        public func writeParameters(to writer: inout ByteWriter) {
            writer.writeByte(enable ? 1 : 0)
            writer.writeByte(filterDuplicates)
            writer.writeInteger(duration, endianness: .little)
            writer.writeInteger(period, endianness: .little)
        }
    }

    /// LE Create Connection (7.8.12): connect to an advertiser. Answered by a Command Status; the
    /// outcome is an LE (Enhanced) Connection Complete, which can take as long as the peer
    /// takes to advertise: cancel with ``LECreateConnectionCancel``.
    public struct LECreateConnection: HCICommand {
        public static let opcode = HCIOpcode.leCreateConnection
        public static let name = "LE Create Connection"
        public static var answer: HCICommandAnswer { .commandStatus }

        /// LE_Scan_Interval, in units of 0.625 ms.
        public var scanInterval: UInt16
        /// LE_Scan_Window, in units of 0.625 ms.
        public var scanWindow: UInt16
        /// Initiator_Filter_Policy (0x00: connect to the peer address given here).
        public var initiatorFilterPolicy: UInt8
        /// Peer_Address_Type.
        public var peerAddressType: LEAddressType
        /// Peer_Address.
        public var peerAddress: BluetoothAddress
        /// Own_Address_Type.
        public var ownAddressType: LEAddressType
        /// Connection_Interval_Min, in units of 1.25 ms.
        public var connectionIntervalMin: UInt16
        /// Connection_Interval_Max, in units of 1.25 ms.
        public var connectionIntervalMax: UInt16
        /// Max_Latency, in connection events.
        public var maxLatency: UInt16
        /// Supervision_Timeout, in units of 10 ms.
        public var supervisionTimeout: UInt16
        /// Min_CE_Length, in units of 0.625 ms.
        public var minCELength: UInt16
        /// Max_CE_Length, in units of 0.625 ms.
        public var maxCELength: UInt16

        /// Creates the command.
        public init(
            scanInterval: UInt16,
            scanWindow: UInt16,
            initiatorFilterPolicy: UInt8 = 0,
            peerAddressType: LEAddressType,
            peerAddress: BluetoothAddress,
            ownAddressType: LEAddressType,
            connectionIntervalMin: UInt16,
            connectionIntervalMax: UInt16,
            maxLatency: UInt16,
            supervisionTimeout: UInt16,
            minCELength: UInt16 = 0,
            maxCELength: UInt16 = 0
        ) {
            self.scanInterval = scanInterval
            self.scanWindow = scanWindow
            self.initiatorFilterPolicy = initiatorFilterPolicy
            self.peerAddressType = peerAddressType
            self.peerAddress = peerAddress
            self.ownAddressType = ownAddressType
            self.connectionIntervalMin = connectionIntervalMin
            self.connectionIntervalMax = connectionIntervalMax
            self.maxLatency = maxLatency
            self.supervisionTimeout = supervisionTimeout
            self.minCELength = minCELength
            self.maxCELength = maxCELength
        }

        public init(parameters: [UInt8]) throws(HCIError) {
            var reader = HCIParameterReader(parameters, packet: Self.name)
            scanInterval = try reader.readUInt16("LE_Scan_Interval")
            scanWindow = try reader.readUInt16("LE_Scan_Window")
            initiatorFilterPolicy = try reader.readUInt8("Initiator_Filter_Policy")
            peerAddressType = LEAddressType(rawValue: try reader.readUInt8("Peer_Address_Type"))
            peerAddress = try reader.readAddress("Peer_Address")
            ownAddressType = LEAddressType(rawValue: try reader.readUInt8("Own_Address_Type"))
            connectionIntervalMin = try reader.readUInt16("Connection_Interval_Min")
            connectionIntervalMax = try reader.readUInt16("Connection_Interval_Max")
            maxLatency = try reader.readUInt16("Max_Latency")
            supervisionTimeout = try reader.readUInt16("Supervision_Timeout")
            minCELength = try reader.readUInt16("Min_CE_Length")
            maxCELength = try reader.readUInt16("Max_CE_Length")
            try reader.expectEnd()
        }

        public func writeParameters(to writer: inout ByteWriter) {
            writer.writeInteger(scanInterval, endianness: .little)
            writer.writeInteger(scanWindow, endianness: .little)
            writer.writeByte(initiatorFilterPolicy)
            writer.writeByte(peerAddressType.rawValue)
            writer.writeAddress(peerAddress)
            writer.writeByte(ownAddressType.rawValue)
            writer.writeInteger(connectionIntervalMin, endianness: .little)
            writer.writeInteger(connectionIntervalMax, endianness: .little)
            writer.writeInteger(maxLatency, endianness: .little)
            writer.writeInteger(supervisionTimeout, endianness: .little)
            writer.writeInteger(minCELength, endianness: .little)
            writer.writeInteger(maxCELength, endianness: .little)
        }
    }

    /// LE Create Connection Cancel (7.8.13): stop a pending LE Create Connection, which then
    /// completes with status 0x02 (unknown connection identifier).
    public struct LECreateConnectionCancel: HCIParameterlessCommand {
        public static let opcode = HCIOpcode.leCreateConnectionCancel
        public static let name = "LE Create Connection Cancel"
        /// Creates the command.
        public init() {}
    }

    /// Disconnect (7.1.6): end a connection. Answered by a Command Status; the outcome is a
    /// Disconnection Complete.
    public struct Disconnect: HCICommand {
        public static let opcode = HCIOpcode.disconnect
        public static let name = "Disconnect"
        public static var answer: HCICommandAnswer { .commandStatus }

        /// Connection_Handle (12 bits).
        public var connectionHandle: UInt16
        /// Reason, told to the peer (usually 0x13, remote user terminated connection).
        public var reason: HCIStatus

        /// Creates the command.
        public init(connectionHandle: UInt16, reason: HCIStatus = .remoteUserTerminatedConnection) {
            self.connectionHandle = connectionHandle
            self.reason = reason
        }

        public init(parameters: [UInt8]) throws(HCIError) {
            var reader = HCIParameterReader(parameters, packet: Self.name)
            connectionHandle = try reader.readUInt16("Connection_Handle")
            reason = HCIStatus(rawValue: try reader.readUInt8("Reason"))
            try reader.expectEnd()
        }

        public func writeParameters(to writer: inout ByteWriter) {
            writer.writeInteger(connectionHandle, endianness: .little)
            writer.writeByte(reason.rawValue)
        }
    }
}

/// Reads a one-byte boolean; any value but 0 and 1 is malformed.
func readBool(_ reader: inout HCIParameterReader, _ field: String, packet: String) throws(HCIError) -> Bool {
    let value = try reader.readUInt8(field)
    guard value <= 1 else { throw HCIError(.malformedPacket, "\(packet): \(field) is \(value), not 0 or 1") }
    return value == 1
}
