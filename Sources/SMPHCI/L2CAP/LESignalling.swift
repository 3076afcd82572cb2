import SMPBytes

/// A signalling command on the LE signalling channel (Core Vol 3 Part A 4): a code, an
/// identifier that pairs a request with its response, and data.
public struct L2CAPSignal: Sendable, Hashable {
    /// The command code (0x01 Command Reject, 0x12 Connection Parameter Update Request, …).
    public var code: UInt8
    /// Identifier: a response carries its request's.
    public var identifier: UInt8
    /// The data after the 4-byte header.
    public var data: [UInt8]

    /// 0x01 Command Reject.
    public static let commandRejectCode: UInt8 = 0x01
    /// 0x12 Connection Parameter Update Request.
    public static let connectionParameterUpdateRequestCode: UInt8 = 0x12
    /// 0x13 Connection Parameter Update Response.
    public static let connectionParameterUpdateResponseCode: UInt8 = 0x13

    /// Creates a signal.
    public init(code: UInt8, identifier: UInt8, data: [UInt8]) {
        self.code = code
        self.identifier = identifier
        self.data = data
    }

    /// Parses the one command an LE signalling PDU carries.
    /// - Parameter bytes: the PDU's payload.
    /// - Throws: ``HCIError`` `.malformedPacket` if the header is short or its length is not the
    ///   data's (LE allows one command per PDU).
    public init(bytes: [UInt8]) throws(HCIError) {
        var reader = HCIParameterReader(bytes, packet: "LE signalling command")
        code = try reader.readUInt8("Code")
        identifier = try reader.readUInt8("Identifier")
        let length = Int(try reader.readUInt16("Length"))
        guard reader.readableBytes == length else {
            throw HCIError(
                .malformedPacket,
                "LE signalling command 0x\(hex(code, digits: 2)): length \(length), but \(reader.readableBytes) data bytes"
            )
        }
        data = reader.readRest()
    }

    /// The command's bytes.
    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 4 + data.count)
        writer.writeByte(code)
        writer.writeByte(identifier)
        writer.writeInteger(UInt16(data.count), endianness: .little)
        writer.writeBytes(data)
        return writer.bytes
    }

    /// The PDU that carries the command on the LE signalling channel.
    public var pdu: L2CAPPDU { L2CAPPDU(channelID: .leSignalling, payload: encoded()) }
}

/// Connection parameters a peripheral asks for (Connection Parameter Update Request).
public struct LEConnectionParameters: Sendable, Hashable {
    /// Interval_Min, in units of 1.25 ms.
    public var intervalMin: UInt16
    /// Interval_Max, in units of 1.25 ms.
    public var intervalMax: UInt16
    /// Latency, in connection events.
    public var latency: UInt16
    /// Timeout, in units of 10 ms.
    public var timeout: UInt16

    /// Creates parameters.
    public init(intervalMin: UInt16, intervalMax: UInt16, latency: UInt16, timeout: UInt16) {
        self.intervalMin = intervalMin
        self.intervalMax = intervalMax
        self.latency = latency
        self.timeout = timeout
    }

    /// Whether the parameters are within the specification's ranges (interval 7.5 ms to 4 s,
    /// minimum at most maximum, latency below 500, timeout 100 ms to 32 s and longer than the
    /// longest gap the latency allows: (1 + latency) × interval × 2).
    public var isValid: Bool {
        intervalMin >= 6 && intervalMax <= 3200 && intervalMin <= intervalMax && latency <= 499
            && (10...3200).contains(timeout) && Int(timeout) * 4 > (1 + Int(latency)) * Int(intervalMax)
    }
}

/// The central's side of LE signalling: answer a Connection Parameter Update Request, reject
/// every other request with Command Reject ("command not understood"), and never answer a
/// Command Reject or a response — the odd codes — to a request this host did not send (no
/// reject loops).
public enum LESignalling {
    /// What to do about a signalling PDU.
    public enum Answer: Sendable, Hashable {
        /// Send this PDU back.
        case reply(L2CAPPDU)
        /// Send this PDU back (an accepted update); the host may also ask its controller for
        /// these parameters with LE Connection Update, without waiting for an answer (some
        /// controllers never send one).
        case acceptUpdate(L2CAPPDU, LEConnectionParameters)
        /// Nothing to send.
        case none
    }

    /// Answers a PDU received on the LE signalling channel.
    /// - Parameter payload: the PDU's payload.
    /// - Returns: the answer; a payload too short for a command header is rejected with
    ///   identifier 0, as there is none to echo.
    public static func answer(_ payload: [UInt8]) -> Answer {
        let signal: L2CAPSignal
        do throws(HCIError) {
            signal = try L2CAPSignal(bytes: payload)
        } catch {
            guard payload.count >= 2 else { return .reply(reject(identifier: 0)) }
            // A Command Reject or a response is never rejected, whatever its shape.
            return payload[0] & 1 == 1 ? .none : .reply(reject(identifier: payload[1]))
        }
        switch signal.code {
        case let code where code & 1 == 1:
            return .none
        case L2CAPSignal.connectionParameterUpdateRequestCode:
            guard signal.data.count == 8 else { return .reply(reject(identifier: signal.identifier)) }
            var reader = ByteReader(signal.data)
            let parameters = LEConnectionParameters(
                intervalMin: reader.readInteger(endianness: .little) ?? 0,
                intervalMax: reader.readInteger(endianness: .little) ?? 0,
                latency: reader.readInteger(endianness: .little) ?? 0,
                timeout: reader.readInteger(endianness: .little) ?? 0
            )
            // Result 0x0000 accepted, 0x0001 rejected.
            let result: UInt16 = parameters.isValid ? 0x0000 : 0x0001
            var writer = ByteWriter()
            writer.writeInteger(result, endianness: .little)
            let response = L2CAPSignal(
                code: L2CAPSignal.connectionParameterUpdateResponseCode,
                identifier: signal.identifier,
                data: writer.bytes
            ).pdu
            return parameters.isValid ? .acceptUpdate(response, parameters) : .reply(response)
        default:
            return .reply(reject(identifier: signal.identifier))
        }
    }

    /// Command Reject, reason 0x0000 command not understood.
    static func reject(identifier: UInt8) -> L2CAPPDU {
        L2CAPSignal(code: L2CAPSignal.commandRejectCode, identifier: identifier, data: [0x00, 0x00]).pdu
    }
}
