/// An advertiser seen while scanning: what its advertisements and scan responses have told so
/// far, merged per address and address type.
public struct DiscoveredPeripheral: Sendable, Hashable {
    /// The advertiser's address.
    public var address: BluetoothAddress
    /// The advertiser's address type.
    public var addressType: LEAddressType
    /// Whether its last advertisement was connectable (`false` until an advertisement, not only
    /// a scan response, was seen).
    public var isConnectable: Bool
    /// Its local name, complete or shortened (see ``hasCompleteLocalName``).
    public var localName: String?
    /// Whether ``localName`` is the complete name; a shortened name never replaces a complete one.
    public var hasCompleteLocalName: Bool
    /// Every service UUID advertised so far, in the order first seen.
    public var serviceUUIDs: [BluetoothUUID]
    /// The last received signal strength in dBm, if the controller measured one.
    public var rssi: Int8?
    /// The TX power in dBm: the TX Power Level AD structure, else the extended report's TX_Power.
    public var txPower: Int8?
    /// The data of the last advertisement (not scan response), as received, malformed or not.
    public var advertisingData: [UInt8]
    /// The data of the last scan response, as received.
    public var scanResponseData: [UInt8]

    /// Creates a peripheral of which only the address is known.
    /// - Parameters:
    ///   - address: its address.
    ///   - addressType: its address type.
    public init(address: BluetoothAddress, addressType: LEAddressType) {
        self.address = address
        self.addressType = addressType
        self.isConnectable = false
        self.localName = nil
        self.hasCompleteLocalName = false
        self.serviceUUIDs = []
        self.rssi = nil
        self.txPower = nil
        self.advertisingData = []
        self.scanResponseData = []
    }

    /// What a caller acts on: a change of any of these is worth reporting again; RSSI and the raw
    /// data change with every report and are not.
    var significant: Significant {
        Significant(
            isConnectable: isConnectable,
            localName: localName,
            hasCompleteLocalName: hasCompleteLocalName,
            serviceUUIDs: serviceUUIDs,
            txPower: txPower
        )
    }

    struct Significant: Hashable {
        var isConnectable: Bool
        var localName: String?
        var hasCompleteLocalName: Bool
        var serviceUUIDs: [BluetoothUUID]
        var txPower: Int8?
    }
}

/// One advertising or scan response PDU, from a legacy or an extended report.
struct AdvertisingSighting: Sendable, Hashable {
    var address: BluetoothAddress
    var addressType: LEAddressType
    var isScanResponse: Bool
    var isConnectable: Bool
    /// Whether `data` is whole (extended reports may deliver it in fragments).
    var isComplete: Bool
    var data: [UInt8]
    var rssi: Int8?
    var txPower: Int8?

    init(_ report: HCI.LEAdvertisingReport.Report) {
        address = report.address
        addressType = report.addressType
        isScanResponse = report.eventType == .scanResponse
        isConnectable = report.eventType.isConnectable
        isComplete = true
        data = report.data
        rssi = report.rssi == 127 ? nil : report.rssi
        txPower = nil
    }

    init(_ report: HCI.LEExtendedAdvertisingReport.Report) {
        address = report.address
        addressType = report.addressType
        isScanResponse = report.eventType.isScanResponse
        isConnectable = report.eventType.isConnectable
        isComplete = report.eventType.dataStatus == 0
        data = report.data
        rssi = report.rssi == 127 ? nil : report.rssi
        txPower = report.txPower == 127 ? nil : report.txPower
    }
}

extension DiscoveredPeripheral {
    /// Folds a sighting of this advertiser in.
    /// - Parameter sighting: an advertisement or scan response from this address.
    /// - Returns: whether something worth reporting changed.
    mutating func merge(_ sighting: AdvertisingSighting) -> Bool {
        let before = significant
        if sighting.isScanResponse {
            scanResponseData = sighting.data
        } else {
            advertisingData = sighting.data
            isConnectable = sighting.isConnectable
        }
        rssi = sighting.rssi ?? rssi
        txPower = sighting.txPower ?? txPower
        // Malformed or fragmentary data tells nothing more; the address and RSSI still count.
        if sighting.isComplete, let parsed = try? AdvertisingData(bytes: sighting.data) {
            merge(parsed)
        }
        return significant != before
    }

    private mutating func merge(_ data: AdvertisingData) {
        if let name = data.localName, data.hasCompleteLocalName || !hasCompleteLocalName {
            localName = name
            hasCompleteLocalName = data.hasCompleteLocalName
        }
        for uuid in data.serviceUUIDs where !serviceUUIDs.contains(uuid) {
            serviceUUIDs.append(uuid)
        }
        txPower = data.txPowerLevel ?? txPower
    }
}
