import SMPBytes
import SMPHCI

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The fake's script: a correct answer to every command the host sends, built with SMPHCI's own
/// types, unless the test set another; the peer's GATT server behind the connection.
extension FakeControllerState {
    /// The fake's public address.
    static let publicAddress = BluetoothAddress("F0:F1:F2:F3:F4:F5") ?? .zero
    /// The ACL buffers it announces: small, so that PDUs are cut and flow control matters.
    static let aclLength: UInt16 = 27
    static let aclCount: UInt8 = 4

    /// The Supported_Commands bitmap: LE Read Buffer Size v2 (octet 41 bit 5) and LE Set Random
    /// Address (octet 25 bit 4); no extended scanning, so the host scans the legacy way.
    static var supportedCommands: [UInt8] {
        var bitmap = [UInt8](repeating: 0, count: HCISupportedCommands.byteCount)
        bitmap[41] = 1 << 5
        bitmap[25] = 1 << 4
        return bitmap
    }

    mutating func handle(_ packet: HCIPacket) {
        received.append(packet)
        switch packet {
        case .command(let command): answer(command)
        case .acl(let acl): peerReceive(acl)
        default: break
        }
    }

    private mutating func answer(_ command: HCICommandPacket) {
        switch answers[command.opcode] {
        case .complete(let parameters): complete(command.opcode, parameters)
        case .status(let status):
            write(event(HCI.CommandStatus(status: status, numHCICommandPackets: 1, opcode: command.opcode)))
        case .raw(let bytes): write(bytes)
        case .silence: break
        case .close:
            if client >= 0 { _ = shutdown(client, Int32(SHUT_RDWR)) }
            stopped = true
        case nil: answerCorrectly(command)
        }
    }

    private mutating func complete(_ opcode: HCIOpcode, _ parameters: [UInt8]) {
        write(event(HCI.CommandComplete(numHCICommandPackets: 1, opcode: opcode, returnParameters: parameters)))
    }

    private mutating func complete<Command: HCICommand>(_ command: Command.Type, _ parameters: Command.ReturnParameters)
    {
        write(event(HCI.CommandComplete(numHCICommandPackets: 1, command: command, returnParameters: parameters)))
    }

    private mutating func answerCorrectly(_ command: HCICommandPacket) {
        switch command.opcode {
        case .readLocalVersionInformation:
            complete(
                HCI.ReadLocalVersionInformation.self,
                .init(hciVersion: 0x0D, hciSubversion: 1, lmpVersion: 0x0D, companyIdentifier: 0xFFFF, lmpSubversion: 1)
            )
        case .readLocalSupportedCommands:
            complete(command.opcode, [0] + Self.supportedCommands)
        case .readBDADDR: complete(HCI.ReadBDADDR.self, .init(address: Self.publicAddress))
        case .leReadBufferSizeV2:
            complete(
                HCI.LEReadBufferSizeV2.self,
                .init(
                    leACLDataPacketLength: Self.aclLength,
                    totalNumLEACLDataPackets: Self.aclCount,
                    isoDataPacketLength: 0,
                    totalNumISODataPackets: 0
                )
            )
        case .leSetDataLength: complete(command.opcode, [0] + command.parameters.prefix(2))
        case .leSetScanEnable:
            complete(command.opcode, [0])
            if command.parameters.first == 1 { advertise() }
        case .leCreateConnection:
            write(event(HCI.CommandStatus(status: .success, numHCICommandPackets: 1, opcode: command.opcode)))
            connect()
        case .disconnect:
            write(event(HCI.CommandStatus(status: .success, numHCICommandPackets: 1, opcode: command.opcode)))
            let handle = UInt16(command.parameters.first ?? 0) | UInt16(command.parameters.dropFirst().first ?? 0) << 8
            write(event(HCI.DisconnectionComplete(connectionHandle: handle, reason: .connectionTerminatedByLocalHost)))
        default:
            // Reset, the masks, the random address, scan parameters: a status is all they return.
            complete(command.opcode, [0])
        }
    }

    /// The peer's advertisement and scan response, once scanning starts.
    private mutating func advertise() {
        guard let peer else { return }
        let data = AdvertisingData(structures: [
            ADStructure(type: .flags, data: [0x06]), ADStructure(type: .completeLocalName, data: Array(peer.name.utf8)),
        ])
        let report = HCI.LEAdvertisingReport(reports: [
            .init(
                eventType: .connectableUndirected,
                addressType: .randomDevice,
                address: peer.address,
                data: data.encoded(),
                rssi: -50
            )
        ])
        write(event(report))
    }

    private mutating func connect() {
        guard let peer else { return }
        gatt = GATTServer(deviceName: peer.name)
        reassembler = L2CAPReassembler()
        let complete = HCI.LEConnectionComplete(
            status: .success,
            connectionHandle: FakePeer.handle,
            role: .central,
            peerAddressType: .randomDevice,
            peerAddress: peer.address,
            connectionInterval: 24,
            peripheralLatency: 0,
            supervisionTimeout: 400,
            centralClockAccuracy: 0
        )
        write(event(complete))
    }

    /// ACL data from the host: its buffer is free again at once; whole PDUs go to the peer.
    private mutating func peerReceive(_ packet: HCIACLDataPacket) {
        if completesPackets {
            let completed = HCI.NumberOfCompletedPackets(completed: [
                .init(connectionHandle: packet.connectionHandle, count: 1)
            ])
            write(event(completed))
        }
        guard let pdu = try? reassembler.receive(packet) else { return }
        pdus.append(pdu)
        guard pdu.channelID == .att, let opcode = pdu.payload.first else { return }
        switch peerAnswers[opcode] {
        case .error(let code):
            let handle = pdu.payload.count >= 3 ? [pdu.payload[1], pdu.payload[2]] : [0, 0]
            sendATT([0x01, opcode] + handle + [code.rawValue], handle: packet.connectionHandle)
        case .silence: break
        case .raw(let bytes): sendATT(bytes, handle: packet.connectionHandle)
        case .disconnect(let reason):
            write(event(HCI.DisconnectionComplete(connectionHandle: packet.connectionHandle, reason: reason)))
        case nil:
            if let reply = gatt?.receive(pdu.payload).reply { sendATT(reply, handle: packet.connectionHandle) }
        }
    }

    /// An ATT PDU from the peer, cut to the fake's ACL length.
    mutating func sendATT(_ payload: [UInt8], handle: UInt16) {
        let pdu = L2CAPPDU(channelID: .att, payload: payload)
        for fragment in pdu.fragments(connectionHandle: handle, maximumDataLength: Int(Self.aclLength)) {
            write(H4Encoder.encode(.acl(FakeController.controllerToHost(fragment))))
        }
    }
}
