import SMPBytes

// The commands a host sends to bring a controller up (Core Vol 4 Part E 7.3 and 7.4), with their
// return parameters.

extension HCI {
    /// Reset (7.3.2): the controller returns to its power-on state.
    public struct Reset: HCIParameterlessCommand {
        public static let opcode = HCIOpcode.reset
        public static let name = "Reset"
        /// Creates the command.
        public init() {}
    }

    /// Read Local Version Information (7.4.1).
    public struct ReadLocalVersionInformation: HCIParameterlessCommand {
        public static let opcode = HCIOpcode.readLocalVersionInformation
        public static let name = "Read Local Version Information"
        /// Creates the command.
        public init() {}

        /// The controller's versions and maker.
        public struct ReturnParameters: HCIReturnParameters {
            /// HCI_Version: the Core Specification version of the HCI (0x09 = 5.0, 0x0D = 5.4).
            public var hciVersion: UInt8
            /// HCI_Subversion: the maker's revision of the HCI.
            public var hciSubversion: UInt16
            /// LMP_Version (the link layer's version for LE-only controllers).
            public var lmpVersion: UInt8
            /// Company_Identifier: the maker, as assigned by the Bluetooth SIG (0x0059 Nordic,
            /// 0x05F1 The Linux Foundation (Zephyr), 0xFFFF none).
            public var companyIdentifier: UInt16
            /// LMP_Subversion: the maker's revision of the link layer.
            public var lmpSubversion: UInt16

            /// Creates the return parameters.
            public init(
                hciVersion: UInt8,
                hciSubversion: UInt16,
                lmpVersion: UInt8,
                companyIdentifier: UInt16,
                lmpSubversion: UInt16
            ) {
                self.hciVersion = hciVersion
                self.hciSubversion = hciSubversion
                self.lmpVersion = lmpVersion
                self.companyIdentifier = companyIdentifier
                self.lmpSubversion = lmpSubversion
            }

            public init(fields bytes: ArraySlice<UInt8>) throws(HCIError) {
                var reader = HCIParameterReader(bytes, packet: "Read Local Version Information return parameters")
                hciVersion = try reader.readUInt8("HCI_Version")
                hciSubversion = try reader.readUInt16("HCI_Subversion")
                lmpVersion = try reader.readUInt8("LMP_Version")
                companyIdentifier = try reader.readUInt16("Company_Identifier")
                lmpSubversion = try reader.readUInt16("LMP_Subversion")
            }

            public func writeFields(to writer: inout ByteWriter) {
                writer.writeByte(hciVersion)
                writer.writeInteger(hciSubversion, endianness: .little)
                writer.writeByte(lmpVersion)
                writer.writeInteger(companyIdentifier, endianness: .little)
                writer.writeInteger(lmpSubversion, endianness: .little)
            }
        }
    }

    /// Read Local Supported Commands (7.4.2).
    public struct ReadLocalSupportedCommands: HCIParameterlessCommand {
        public static let opcode = HCIOpcode.readLocalSupportedCommands
        public static let name = "Read Local Supported Commands"
        /// Creates the command.
        public init() {}

        /// The bitmap of the commands the controller supports.
        public struct ReturnParameters: HCIReturnParameters {
            /// Supported_Commands.
            public var supportedCommands: HCISupportedCommands

            /// Creates the return parameters.
            public init(supportedCommands: HCISupportedCommands) { self.supportedCommands = supportedCommands }

            public init(fields bytes: ArraySlice<UInt8>) throws(HCIError) {
                var reader = HCIParameterReader(bytes, packet: "Read Local Supported Commands return parameters")
                supportedCommands = HCISupportedCommands(
                    uncheckedBytes: try reader.readBytes("Supported_Commands", count: HCISupportedCommands.byteCount)
                )
            }

            public func writeFields(to writer: inout ByteWriter) {
                writer.writeBytes(supportedCommands.bytes)
            }
        }
    }

    /// Read Buffer Size (7.4.5): the controller's ACL buffers shared by BR/EDR and, when LE Read
    /// Buffer Size reports none of its own, LE.
    public struct ReadBufferSize: HCIParameterlessCommand {
        public static let opcode = HCIOpcode.readBufferSize
        public static let name = "Read Buffer Size"
        /// Creates the command.
        public init() {}

        /// The controller's buffers.
        public struct ReturnParameters: HCIReturnParameters {
            /// ACL_Data_Packet_Length: the most data bytes in one ACL packet toward the controller.
            public var aclDataPacketLength: UInt16
            /// Synchronous_Data_Packet_Length.
            public var synchronousDataPacketLength: UInt8
            /// Total_Num_ACL_Data_Packets: how many ACL packets the controller can hold.
            public var totalNumACLDataPackets: UInt16
            /// Total_Num_Synchronous_Data_Packets.
            public var totalNumSynchronousDataPackets: UInt16

            /// Creates the return parameters.
            public init(
                aclDataPacketLength: UInt16,
                synchronousDataPacketLength: UInt8,
                totalNumACLDataPackets: UInt16,
                totalNumSynchronousDataPackets: UInt16
            ) {
                self.aclDataPacketLength = aclDataPacketLength
                self.synchronousDataPacketLength = synchronousDataPacketLength
                self.totalNumACLDataPackets = totalNumACLDataPackets
                self.totalNumSynchronousDataPackets = totalNumSynchronousDataPackets
            }

            public init(fields bytes: ArraySlice<UInt8>) throws(HCIError) {
                var reader = HCIParameterReader(bytes, packet: "Read Buffer Size return parameters")
                aclDataPacketLength = try reader.readUInt16("ACL_Data_Packet_Length")
                synchronousDataPacketLength = try reader.readUInt8("Synchronous_Data_Packet_Length")
                totalNumACLDataPackets = try reader.readUInt16("Total_Num_ACL_Data_Packets")
                totalNumSynchronousDataPackets = try reader.readUInt16("Total_Num_Synchronous_Data_Packets")
            }

            public func writeFields(to writer: inout ByteWriter) {
                writer.writeInteger(aclDataPacketLength, endianness: .little)
                writer.writeByte(synchronousDataPacketLength)
                writer.writeInteger(totalNumACLDataPackets, endianness: .little)
                writer.writeInteger(totalNumSynchronousDataPackets, endianness: .little)
            }
        }
    }

    /// Read BD_ADDR (7.4.6): the controller's public address (zero if it has none).
    public struct ReadBDADDR: HCIParameterlessCommand {
        public static let opcode = HCIOpcode.readBDADDR
        public static let name = "Read BD_ADDR"
        /// Creates the command.
        public init() {}

        /// The public address.
        public struct ReturnParameters: HCIReturnParameters {
            /// BD_ADDR: the public address, or 00:00:00:00:00:00 for a controller without one.
            public var address: BluetoothAddress

            /// Creates the return parameters.
            public init(address: BluetoothAddress) { self.address = address }

            public init(fields bytes: ArraySlice<UInt8>) throws(HCIError) {
                var reader = HCIParameterReader(bytes, packet: "Read BD_ADDR return parameters")
                address = try reader.readAddress("BD_ADDR")
            }

            public func writeFields(to writer: inout ByteWriter) {
                writer.writeAddress(address)
            }
        }
    }

    /// Set Event Mask (7.3.1): which events the controller may send (bit n is event code n + 1).
    public struct SetEventMask: HCICommand {
        public static let opcode = HCIOpcode.setEventMask
        public static let name = "Set Event Mask"
        /// Event_Mask.
        public var mask: UInt64

        /// The events an LE central needs: Disconnection Complete (0x05), Encryption Change
        /// (0x08), Hardware Error (0x10), Data Buffer Overflow (0x1A), Encryption Key Refresh
        /// Complete (0x30), LE Meta (0x3E). Command Complete, Command Status and Number Of
        /// Completed Packets cannot be masked.
        public static let leCentral = SetEventMask(eventCodes: [0x05, 0x08, 0x10, 0x1A, 0x30, 0x3E])

        /// Creates the command.
        /// - Parameter mask: the mask.
        public init(mask: UInt64) { self.mask = mask }

        /// Creates the command that enables these events.
        /// - Parameter eventCodes: event codes from 0x01 to 0x40.
        public init(eventCodes: [UInt8]) {
            self.mask = eventCodes.reduce(0) { $0 | (1 << UInt64(($1 &- 1) & 63)) }
        }

        public init(parameters: [UInt8]) throws(HCIError) {
            var reader = HCIParameterReader(parameters, packet: Self.name)
            mask = try reader.readUInt64("Event_Mask")
            try reader.expectEnd()
        }

        public func writeParameters(to writer: inout ByteWriter) {
            writer.writeInteger(mask, endianness: .little)
        }
    }

    /// LE Set Event Mask (7.8.1): which LE Meta subevents the controller may send (bit n is
    /// subevent code n + 1).
    public struct LESetEventMask: HCICommand {
        public static let opcode = HCIOpcode.leSetEventMask
        public static let name = "LE Set Event Mask"
        /// LE_Event_Mask.
        public var mask: UInt64

        /// The subevents an LE central needs: Connection Complete (0x01), Advertising Report
        /// (0x02), Connection Update Complete (0x03), Remote Connection Parameter Request (0x06),
        /// Data Length Change (0x07), Enhanced Connection Complete (0x0A), PHY Update Complete
        /// (0x0C), Extended Advertising Report (0x0D). With Enhanced Connection Complete enabled,
        /// a controller sends it in place of Connection Complete.
        public static let leCentral = LESetEventMask(subeventCodes: [0x01, 0x02, 0x03, 0x06, 0x07, 0x0A, 0x0C, 0x0D])

        /// Creates the command.
        /// - Parameter mask: the mask.
        public init(mask: UInt64) { self.mask = mask }

        /// Creates the command that enables these subevents.
        /// - Parameter subeventCodes: LE subevent codes from 0x01 to 0x40.
        public init(subeventCodes: [UInt8]) {
            self.mask = subeventCodes.reduce(0) { $0 | (1 << UInt64(($1 &- 1) & 63)) }
        }

        public init(parameters: [UInt8]) throws(HCIError) {
            var reader = HCIParameterReader(parameters, packet: Self.name)
            mask = try reader.readUInt64("LE_Event_Mask")
            try reader.expectEnd()
        }

        public func writeParameters(to writer: inout ByteWriter) {
            writer.writeInteger(mask, endianness: .little)
        }
    }

    /// LE Read Buffer Size [v1] (7.8.2): the controller's buffers for LE ACL data.
    public struct LEReadBufferSize: HCIParameterlessCommand {
        public static let opcode = HCIOpcode.leReadBufferSize
        public static let name = "LE Read Buffer Size"
        /// Creates the command.
        public init() {}

        /// The LE ACL buffers; zero length and count mean that LE shares the buffers of Read
        /// Buffer Size.
        public struct ReturnParameters: HCIReturnParameters {
            /// LE_ACL_Data_Packet_Length: the most data bytes in one LE ACL packet toward the
            /// controller (0: use Read Buffer Size's).
            public var leACLDataPacketLength: UInt16
            /// Total_Num_LE_ACL_Data_Packets (0: use Read Buffer Size's).
            public var totalNumLEACLDataPackets: UInt8

            /// Creates the return parameters.
            public init(leACLDataPacketLength: UInt16, totalNumLEACLDataPackets: UInt8) {
                self.leACLDataPacketLength = leACLDataPacketLength
                self.totalNumLEACLDataPackets = totalNumLEACLDataPackets
            }

            public init(fields bytes: ArraySlice<UInt8>) throws(HCIError) {
                var reader = HCIParameterReader(bytes, packet: "LE Read Buffer Size return parameters")
                leACLDataPacketLength = try reader.readUInt16("LE_ACL_Data_Packet_Length")
                totalNumLEACLDataPackets = try reader.readUInt8("Total_Num_LE_ACL_Data_Packets")
            }

            public func writeFields(to writer: inout ByteWriter) {
                writer.writeInteger(leACLDataPacketLength, endianness: .little)
                writer.writeByte(totalNumLEACLDataPackets)
            }
        }
    }

    /// LE Read Buffer Size v2 (7.8.2): the LE ACL buffers and the isochronous ones.
    public struct LEReadBufferSizeV2: HCIParameterlessCommand {
        public static let opcode = HCIOpcode.leReadBufferSizeV2
        public static let name = "LE Read Buffer Size v2"
        /// Creates the command.
        public init() {}

        /// The LE ACL and ISO buffers.
        public struct ReturnParameters: HCIReturnParameters {
            /// LE_ACL_Data_Packet_Length (0: use Read Buffer Size's).
            public var leACLDataPacketLength: UInt16
            /// Total_Num_LE_ACL_Data_Packets (0: use Read Buffer Size's).
            public var totalNumLEACLDataPackets: UInt8
            /// ISO_Data_Packet_Length.
            public var isoDataPacketLength: UInt16
            /// Total_Num_ISO_Data_Packets.
            public var totalNumISODataPackets: UInt8

            /// Creates the return parameters.
            public init(
                leACLDataPacketLength: UInt16,
                totalNumLEACLDataPackets: UInt8,
                isoDataPacketLength: UInt16,
                totalNumISODataPackets: UInt8
            ) {
                self.leACLDataPacketLength = leACLDataPacketLength
                self.totalNumLEACLDataPackets = totalNumLEACLDataPackets
                self.isoDataPacketLength = isoDataPacketLength
                self.totalNumISODataPackets = totalNumISODataPackets
            }

            public init(fields bytes: ArraySlice<UInt8>) throws(HCIError) {
                var reader = HCIParameterReader(bytes, packet: "LE Read Buffer Size v2 return parameters")
                leACLDataPacketLength = try reader.readUInt16("LE_ACL_Data_Packet_Length")
                totalNumLEACLDataPackets = try reader.readUInt8("Total_Num_LE_ACL_Data_Packets")
                isoDataPacketLength = try reader.readUInt16("ISO_Data_Packet_Length")
                totalNumISODataPackets = try reader.readUInt8("Total_Num_ISO_Data_Packets")
            }

            public func writeFields(to writer: inout ByteWriter) {
                writer.writeInteger(leACLDataPacketLength, endianness: .little)
                writer.writeByte(totalNumLEACLDataPackets)
                writer.writeInteger(isoDataPacketLength, endianness: .little)
                writer.writeByte(totalNumISODataPackets)
            }
        }
    }

    /// LE Set Random Address (7.8.4): the random address this controller uses when a command
    /// names the "random" own address type.
    public struct LESetRandomAddress: HCICommand {
        public static let opcode = HCIOpcode.leSetRandomAddress
        public static let name = "LE Set Random Address"
        /// Random_Address.
        public var address: BluetoothAddress

        /// Creates the command.
        /// - Parameter address: the random address (a static address has its two top bits set).
        public init(address: BluetoothAddress) { self.address = address }

        public init(parameters: [UInt8]) throws(HCIError) {
            var reader = HCIParameterReader(parameters, packet: Self.name)
            address = try reader.readAddress("Random_Address")
            try reader.expectEnd()
        }

        public func writeParameters(to writer: inout ByteWriter) {
            writer.writeAddress(address)
        }
    }
}
