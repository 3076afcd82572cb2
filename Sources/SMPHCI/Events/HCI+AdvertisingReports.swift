import SMPBytes

// LE Meta subevents that report advertisers (Core Vol 4 Part E 7.7.65.2 and 7.7.65.13).

extension HCI {
    /// LE Advertising Report (7.7.65.2): advertisements and scan responses seen by legacy
    /// scanning.
    public struct LEAdvertisingReport: HCILESubevent {
        public static let subeventCode: UInt8 = 0x02
        public static let name = "LE Advertising Report"

        /// The kind of legacy advertising PDU. An open set.
        public struct EventType: RawRepresentable, Sendable, Hashable {
            public let rawValue: UInt8
            /// Creates an event type from its value.
            public init(rawValue: UInt8) { self.rawValue = rawValue }
            /// 0x00 ADV_IND: connectable and scannable.
            public static let connectableUndirected = EventType(rawValue: 0x00)
            /// 0x01 ADV_DIRECT_IND: connectable, directed to one central.
            public static let connectableDirected = EventType(rawValue: 0x01)
            /// 0x02 ADV_SCAN_IND: scannable, not connectable.
            public static let scannableUndirected = EventType(rawValue: 0x02)
            /// 0x03 ADV_NONCONN_IND: neither.
            public static let nonConnectableUndirected = EventType(rawValue: 0x03)
            /// 0x04 SCAN_RSP: a scan response.
            public static let scanResponse = EventType(rawValue: 0x04)
            /// Whether a central may connect to the advertiser.
            public var isConnectable: Bool { rawValue == 0x00 || rawValue == 0x01 }
        }

        /// One advertiser's report.
        public struct Report: Sendable, Hashable {
            /// Event_Type.
            public var eventType: EventType
            /// Address_Type.
            public var addressType: LEAddressType
            /// Address.
            public var address: BluetoothAddress
            /// Data: the advertising data or scan response data (at most 31 bytes).
            public var data: [UInt8]
            /// RSSI in dBm (127: not available).
            public var rssi: Int8

            /// The report's data as AD structures.
            /// - Returns: the advertising (or scan response) data.
            /// - Throws: ``HCIError`` `.malformedAdvertisingData` if its structures overrun it.
            public func advertisingData() throws(HCIError) -> AdvertisingData {
                try AdvertisingData(bytes: data)
            }

            /// Creates a report.
            public init(
                eventType: EventType,
                addressType: LEAddressType,
                address: BluetoothAddress,
                data: [UInt8],
                rssi: Int8
            ) {
                self.eventType = eventType
                self.addressType = addressType
                self.address = address
                self.data = data
                self.rssi = rssi
            }
        }

        /// The reports, in order.
        public var reports: [Report]

        /// Creates the event.
        public init(reports: [Report]) { self.reports = reports }

        public init(parameters: ArraySlice<UInt8>) throws(HCIError) {
            var reader = HCIParameterReader(parameters, packet: Self.name)
            let count = Int(try reader.readUInt8("Num_Reports"))
            // One report after the other, as Bumble, BlueZ and Zephyr lay them out.
            var reports: [Report] = []
            for index in 0..<count {
                let eventType = EventType(rawValue: try reader.readUInt8("Event_Type[\(index)]"))
                let addressType = LEAddressType(rawValue: try reader.readUInt8("Address_Type[\(index)]"))
                let address = try reader.readAddress("Address[\(index)]")
                let length = Int(try reader.readUInt8("Data_Length[\(index)]"))
                let data = try reader.readBytes("Data[\(index)]", count: length)
                let rssi = try reader.readInt8("RSSI[\(index)]")
                reports.append(
                    Report(eventType: eventType, addressType: addressType, address: address, data: data, rssi: rssi)
                )
            }
            self.reports = reports
        }

        public func writeParameters(to writer: inout ByteWriter) {
            writer.writeByte(UInt8(truncatingIfNeeded: reports.count))
            for report in reports {
                writer.writeByte(report.eventType.rawValue)
                writer.writeByte(report.addressType.rawValue)
                writer.writeAddress(report.address)
                writer.writeByte(UInt8(truncatingIfNeeded: report.data.count))
                writer.writeBytes(report.data)
                writer.writeInteger(report.rssi, endianness: .little)
            }
        }
    }

    /// LE Extended Advertising Report (7.7.65.13): what extended scanning reports, legacy
    /// advertisements included (with the legacy bit set).
    public struct LEExtendedAdvertisingReport: HCILESubevent {
        public static let subeventCode: UInt8 = 0x0D
        public static let name = "LE Extended Advertising Report"

        /// Event_Type: bits describing the advertisement, and the data's status in bits 5–6.
        public struct EventType: RawRepresentable, Sendable, Hashable {
            public let rawValue: UInt16
            /// Creates an event type from its value.
            public init(rawValue: UInt16) { self.rawValue = rawValue }
            /// Bit 0: connectable.
            public var isConnectable: Bool { rawValue & 0x0001 != 0 }
            /// Bit 1: scannable.
            public var isScannable: Bool { rawValue & 0x0002 != 0 }
            /// Bit 2: directed.
            public var isDirected: Bool { rawValue & 0x0004 != 0 }
            /// Bit 3: a scan response.
            public var isScanResponse: Bool { rawValue & 0x0008 != 0 }
            /// Bit 4: a legacy advertising PDU.
            public var isLegacy: Bool { rawValue & 0x0010 != 0 }
            /// Bits 5–6: 0 complete, 1 incomplete with more to come, 2 incomplete and truncated.
            public var dataStatus: UInt8 { UInt8((rawValue >> 5) & 0x03) }
        }

        /// One advertiser's report.
        public struct Report: Sendable, Hashable {
            /// Event_Type.
            public var eventType: EventType
            /// Address_Type (0xFF: anonymous).
            public var addressType: LEAddressType
            /// Address.
            public var address: BluetoothAddress
            /// Primary_PHY (1: LE 1M, 3: LE Coded).
            public var primaryPHY: UInt8
            /// Secondary_PHY (0: none).
            public var secondaryPHY: UInt8
            /// Advertising_SID (0xFF: none).
            public var advertisingSID: UInt8
            /// TX_Power in dBm (127: not available).
            public var txPower: Int8
            /// RSSI in dBm (127: not available).
            public var rssi: Int8
            /// Periodic_Advertising_Interval, in units of 1.25 ms (0: none).
            public var periodicAdvertisingInterval: UInt16
            /// Direct_Address_Type.
            public var directAddressType: LEAddressType
            /// Direct_Address.
            public var directAddress: BluetoothAddress
            /// Data (a fragment when ``EventType/dataStatus`` is not 0).
            public var data: [UInt8]

            /// The report's data as AD structures (meaningful when the data is complete).
            /// - Returns: the advertising (or scan response) data.
            /// - Throws: ``HCIError`` `.malformedAdvertisingData` if its structures overrun it.
            public func advertisingData() throws(HCIError) -> AdvertisingData {
                try AdvertisingData(bytes: data)
            }

            /// Creates a report.
            public init(
                eventType: EventType,
                addressType: LEAddressType,
                address: BluetoothAddress,
                primaryPHY: UInt8,
                secondaryPHY: UInt8,
                advertisingSID: UInt8,
                txPower: Int8,
                rssi: Int8,
                periodicAdvertisingInterval: UInt16,
                directAddressType: LEAddressType,
                directAddress: BluetoothAddress,
                data: [UInt8]
            ) {
                self.eventType = eventType
                self.addressType = addressType
                self.address = address
                self.primaryPHY = primaryPHY
                self.secondaryPHY = secondaryPHY
                self.advertisingSID = advertisingSID
                self.txPower = txPower
                self.rssi = rssi
                self.periodicAdvertisingInterval = periodicAdvertisingInterval
                self.directAddressType = directAddressType
                self.directAddress = directAddress
                self.data = data
            }
        }

        /// The reports, in order.
        public var reports: [Report]

        /// Creates the event.
        public init(reports: [Report]) { self.reports = reports }

        public init(parameters: ArraySlice<UInt8>) throws(HCIError) {
            var reader = HCIParameterReader(parameters, packet: Self.name)
            let count = Int(try reader.readUInt8("Num_Reports"))
            var reports: [Report] = []
            for index in 0..<count {
                let eventType = EventType(rawValue: try reader.readUInt16("Event_Type[\(index)]"))
                let addressType = LEAddressType(rawValue: try reader.readUInt8("Address_Type[\(index)]"))
                let address = try reader.readAddress("Address[\(index)]")
                let primaryPHY = try reader.readUInt8("Primary_PHY[\(index)]")
                let secondaryPHY = try reader.readUInt8("Secondary_PHY[\(index)]")
                let sid = try reader.readUInt8("Advertising_SID[\(index)]")
                let txPower = try reader.readInt8("TX_Power[\(index)]")
                let rssi = try reader.readInt8("RSSI[\(index)]")
                let interval = try reader.readUInt16("Periodic_Advertising_Interval[\(index)]")
                let directAddressType = LEAddressType(rawValue: try reader.readUInt8("Direct_Address_Type[\(index)]"))
                let directAddress = try reader.readAddress("Direct_Address[\(index)]")
                let length = Int(try reader.readUInt8("Data_Length[\(index)]"))
                let data = try reader.readBytes("Data[\(index)]", count: length)
                reports.append(
                    Report(
                        eventType: eventType,
                        addressType: addressType,
                        address: address,
                        primaryPHY: primaryPHY,
                        secondaryPHY: secondaryPHY,
                        advertisingSID: sid,
                        txPower: txPower,
                        rssi: rssi,
                        periodicAdvertisingInterval: interval,
                        directAddressType: directAddressType,
                        directAddress: directAddress,
                        data: data
                    )
                )
            }
            self.reports = reports
        }

        public func writeParameters(to writer: inout ByteWriter) {
            writer.writeByte(UInt8(truncatingIfNeeded: reports.count))
            for report in reports {
                writer.writeInteger(report.eventType.rawValue, endianness: .little)
                writer.writeByte(report.addressType.rawValue)
                writer.writeAddress(report.address)
                writer.writeByte(report.primaryPHY)
                writer.writeByte(report.secondaryPHY)
                writer.writeByte(report.advertisingSID)
                writer.writeInteger(report.txPower, endianness: .little)
                writer.writeInteger(report.rssi, endianness: .little)
                writer.writeInteger(report.periodicAdvertisingInterval, endianness: .little)
                writer.writeByte(report.directAddressType.rawValue)
                writer.writeAddress(report.directAddress)
                writer.writeByte(UInt8(truncatingIfNeeded: report.data.count))
                writer.writeBytes(report.data)
            }
        }
    }
}
