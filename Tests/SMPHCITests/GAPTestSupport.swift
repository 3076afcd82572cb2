import SMPHCI
import Testing

/// Fixtures and event builders for the GAP machines' tests.
enum GAP {
    /// Bumble's advertiser in GAPVectors: random C0:11:22:33:44:55.
    static let advertiser = address("C0:11:22:33:44:55")
    /// A peer that no Bumble controller plays.
    static let absent = address("C4:F2:17:1A:1D:BB")
    /// The SMP service.
    static let smpService = BluetoothUUID("8D53DC1D-1DB7-4CD3-868B-8A527460AA84") ?? BluetoothUUID(UInt16(0))

    /// An address from text; a typo records an issue.
    static func address(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> BluetoothAddress {
        guard let address = BluetoothAddress(text) else {
            Issue.record("not an address: \(text)", sourceLocation: sourceLocation)
            return .zero
        }
        return address
    }

    /// What a bring-up learnt: extended scanning or not, a random address or not.
    static func controller(extended: Bool = false, random: BluetoothAddress? = nil) throws -> ControllerInfo {
        var bitmap = [UInt8](repeating: 0, count: HCISupportedCommands.byteCount)
        if extended { bitmap[37] = 0x60 }
        return ControllerInfo(
            version: .init(
                hciVersion: 0x0D,
                hciSubversion: 0,
                lmpVersion: 0x0D,
                companyIdentifier: 0xFFFF,
                lmpSubversion: 0
            ),
            publicAddress: address("F0:00:00:00:00:02"),
            randomAddress: random,
            supportedCommands: try #require(HCISupportedCommands(bytes: bitmap)),
            aclDataPacketLength: 27,
            aclDataPacketCount: 64,
            aclBuffersAreShared: false
        )
    }

    /// A Command Complete with only a status.
    static func complete(_ opcode: HCIOpcode, _ status: HCIStatus = .success) -> HCIEvent {
        .commandComplete(.init(numHCICommandPackets: 1, opcode: opcode, returnParameters: [status.rawValue]))
    }

    /// A Command Status.
    static func status(_ opcode: HCIOpcode, _ status: HCIStatus = .success) -> HCIEvent {
        .commandStatus(.init(status: status, numHCICommandPackets: 1, opcode: opcode))
    }

    /// An LE Connection Complete.
    static func connectionComplete(
        _ status: HCIStatus = .success,
        handle: UInt16 = 0x0040,
        role: HCIRole,
        peer: BluetoothAddress,
        peerType: LEAddressType = .randomDevice
    ) -> HCIEvent {
        .leConnectionComplete(
            .init(
                status: status,
                connectionHandle: handle,
                role: role,
                peerAddressType: peerType,
                peerAddress: peer,
                connectionInterval: 40,
                peripheralLatency: 0,
                supervisionTimeout: 400,
                centralClockAccuracy: 0
            )
        )
    }

    /// A legacy advertising report of one advertiser.
    static func report(
        _ type: HCI.LEAdvertisingReport.EventType,
        from peer: BluetoothAddress = advertiser,
        _ structures: [ADStructure],
        rssi: Int8 = -60
    ) -> HCIEvent {
        rawReport(type, from: peer, AdvertisingData(structures: structures).encoded(), rssi: rssi)
    }

    /// A legacy advertising report with raw data.
    static func rawReport(
        _ type: HCI.LEAdvertisingReport.EventType,
        from peer: BluetoothAddress = advertiser,
        _ data: [UInt8],
        rssi: Int8 = -60
    ) -> HCIEvent {
        .leAdvertisingReport(
            .init(reports: [.init(eventType: type, addressType: .randomDevice, address: peer, data: data, rssi: rssi)])
        )
    }

    /// The event that GAPVectors hex holds, parsed.
    static func event(_ hex: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> HCIEvent {
        try h4Event(hex, sourceLocation: sourceLocation)
    }
}
