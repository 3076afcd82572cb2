import SMPLink

/// A Bluetooth LE connection as the simulated link models it: the radio (PHY, data length,
/// connection interval, packets per connection event), GATT (ATT MTU, controller write buffer)
/// and the device behind it (SMP buffer size and count, reassembly, time to handle a request).
///
/// Time on air follows the Core Specification (Vol 6, Part B, 2.1): an LL data PDU is preamble,
/// access address (4), header (2), payload (the data length at most) and CRC (3), at 1 or
/// 2 Mbit/s; coded PHY S=8 adds its 376 µs FEC block 1 and sends 64 µs per byte. Each packet the
/// central sends is answered by one from the peripheral, each separated by T_IFS (150 µs). An
/// ATT write or notification of `n` bytes is an L2CAP PDU of `n + 7` bytes (4 L2CAP + 3 ATT),
/// cut into packets of the data length. Not modelled: encryption's 4-byte MIC, retransmissions
/// after CRC errors, and the peripheral's packets being longer than empty ones when it answers
/// in the same event (each direction gets its own slots).
public struct BLELinkProfile: Sendable, Hashable, CustomStringConvertible {
    /// The LE physical layer.
    public enum PHY: String, Sendable, Hashable, CaseIterable {
        /// LE 1M: 1 Mbit/s.
        case le1M = "1M"
        /// LE 2M: 2 Mbit/s.
        case le2M = "2M"
        /// LE Coded, S=8 (125 kbit/s): long range.
        case coded = "coded"

        /// Microseconds on air of one LL data PDU carrying `payload` bytes.
        /// - Parameter payload: 0…251.
        public func airTime(payload: Int) -> Double {
            switch self {
            case .le1M: Double(1 + 4 + 2 + payload + 3) * 8
            case .le2M: Double(2 + 4 + 2 + payload + 3) * 4
            case .coded: 376 + Double(2 + payload + 3) * 64 + 24
            }
        }
    }

    /// The name used by `mcumgr bench ble --profile`.
    public var name: String
    /// The PHY.
    public var phy: PHY
    /// The negotiated ATT MTU (23…517); a write or notification carries MTU − 3 bytes.
    public var attMTU: Int
    /// The LL maximum payload (data length extension), 27…251.
    public var dataLength: Int
    /// The connection interval in milliseconds (7.5…4000).
    public var connectionIntervalMilliseconds: Double
    /// The most LL packets the central sends in one connection event (the phone's limit).
    public var centralPacketsPerEvent: Int
    /// The most LL packets the peripheral sends in one connection event.
    public var peripheralPacketsPerEvent: Int
    /// LL packets the central's controller buffers for write without response; a write that
    /// does not fit waits (`canSendWriteWithoutResponse` is false).
    public var writeBufferPackets: Int
    /// Whether the device reassembles a message from several writes.
    public var deviceReassembly: Bool
    /// The device's SMP buffer (`buf_size`), header included.
    public var deviceBufferSize: Int
    /// The device's SMP buffers (`buf_count`).
    public var deviceBufferCount: Int
    /// Time the device spends on one request (parse, flash write, answer), in milliseconds.
    public var requestProcessingMilliseconds: Double

    /// Creates a profile.
    public init(
        name: String,
        phy: PHY,
        attMTU: Int,
        dataLength: Int,
        connectionIntervalMilliseconds: Double,
        centralPacketsPerEvent: Int = 6,
        peripheralPacketsPerEvent: Int = 6,
        writeBufferPackets: Int = 16,
        deviceReassembly: Bool = true,
        deviceBufferSize: Int = 384,
        deviceBufferCount: Int = 4,
        requestProcessingMilliseconds: Double = 1
    ) {
        self.name = name
        self.phy = phy
        self.attMTU = min(517, max(23, attMTU))
        self.dataLength = min(251, max(27, dataLength))
        self.connectionIntervalMilliseconds = min(4000, max(7.5, connectionIntervalMilliseconds))
        self.centralPacketsPerEvent = max(1, centralPacketsPerEvent)
        self.peripheralPacketsPerEvent = max(1, peripheralPacketsPerEvent)
        self.writeBufferPackets = max(1, writeBufferPackets)
        self.deviceReassembly = deviceReassembly
        self.deviceBufferSize = deviceBufferSize
        self.deviceBufferCount = max(1, deviceBufferCount)
        self.requestProcessingMilliseconds = max(0, requestProcessingMilliseconds)
    }

    /// The value of one write or notification: ATT MTU − 3.
    public var maximumWriteLength: Int { attMTU - SMPGATT.attHeaderSize }

    /// LL packets one write or notification of `length` bytes takes.
    public func packets(forValueOf length: Int) -> Int {
        let pdu = length + SMPGATT.attHeaderSize + SMPGATT.l2capHeaderSize
        return (pdu + dataLength - 1) / dataLength
    }

    /// Microseconds of one exchange in a connection event: a full central packet, T_IFS, an
    /// empty peripheral packet, T_IFS.
    public var exchangeMicroseconds: Double {
        phy.airTime(payload: dataLength) + 150 + phy.airTime(payload: 0) + 150
    }

    /// Packets the central actually sends per event: its limit, or what fits in the interval.
    public var centralSlotsPerEvent: Int {
        max(1, min(centralPacketsPerEvent, Int(connectionIntervalMilliseconds * 1000 / exchangeMicroseconds)))
    }

    /// Packets the peripheral actually sends per event.
    public var peripheralSlotsPerEvent: Int {
        max(1, min(peripheralPacketsPerEvent, Int(connectionIntervalMilliseconds * 1000 / exchangeMicroseconds)))
    }

    /// The link's theoretical payload capacity from central to peripheral, in bytes per second:
    /// full-size writes back to back in every slot, nothing else on the link. No SMP transfer
    /// can exceed it.
    public var theoreticalWriteCapacity: Double {
        let packetsPerSecond = Double(centralSlotsPerEvent) / (connectionIntervalMilliseconds / 1000)
        return packetsPerSecond / Double(packets(forValueOf: maximumWriteLength)) * Double(maximumWriteLength)
    }

    /// LL payload capacity from central to peripheral (data length × packets per second).
    public var linkLayerCapacity: Double {
        Double(centralSlotsPerEvent) / (connectionIntervalMilliseconds / 1000) * Double(dataLength)
    }

    public var description: String {
        let buffer = deviceReassembly ? "reassembly \(deviceBufferSize) × \(deviceBufferCount)" : "no reassembly"
        return
            "\(name): ATT MTU \(attMTU), \(phy.rawValue) PHY, DLE \(dataLength), \(connectionIntervalMilliseconds) ms, \(centralPacketsPerEvent)/\(peripheralPacketsPerEvent) packets per event, \(buffer)"
    }

    // MARK: - Named profiles

    /// An old phone: ATT MTU 23, 1M PHY, no data length extension, 30 ms interval.
    public static let legacy = BLELinkProfile(
        name: "legacy",
        phy: .le1M,
        attMTU: 23,
        dataLength: 27,
        connectionIntervalMilliseconds: 30,
        centralPacketsPerEvent: 4,
        peripheralPacketsPerEvent: 4,
        writeBufferPackets: 8
    )

    /// A current phone without device reassembly: ATT MTU 247, 2M PHY, DLE 251, 15 ms.
    public static let fast = BLELinkProfile(
        name: "fast",
        phy: .le2M,
        attMTU: 247,
        dataLength: 251,
        connectionIntervalMilliseconds: 15,
        deviceReassembly: false,
        deviceBufferSize: 384,
        deviceBufferCount: 4
    )

    /// A current phone and an nRF Connect SDK device with reassembly: ATT MTU 498, 2M PHY,
    /// DLE 251, 15 ms, 2475-byte buffers × 4 (Nordic's recommended DFU settings).
    public static let reassembly = BLELinkProfile(
        name: "reassembly",
        phy: .le2M,
        attMTU: 498,
        dataLength: 251,
        connectionIntervalMilliseconds: 15,
        deviceBufferSize: 2475,
        deviceBufferCount: 4
    )

    /// Long range: coded PHY S=8, ATT MTU 247, DLE 251, 30 ms (one packet per event).
    public static let longRange = BLELinkProfile(
        name: "coded",
        phy: .coded,
        attMTU: 247,
        dataLength: 251,
        connectionIntervalMilliseconds: 30,
        deviceBufferSize: 1024,
        deviceBufferCount: 4
    )

    /// Every named profile.
    public static let all: [BLELinkProfile] = [.legacy, .fast, .reassembly, .longRange]

    /// The profile with this name, if any.
    public static func named(_ name: String) -> BLELinkProfile? {
        all.first { $0.name == name.lowercased() }
    }
}
