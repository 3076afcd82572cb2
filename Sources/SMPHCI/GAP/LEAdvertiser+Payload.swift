extension LEAdvertiser {
    /// The advertising data: Flags (LE General Discoverable, BR/EDR not supported) and the
    /// service UUID in the complete list of its width.
    /// - Parameter service: the service UUID.
    /// - Returns: the data, at most 21 bytes (a 128-bit UUID).
    static func advertisingData(service: BluetoothUUID, name: String) -> [UInt8] {
        let (type, bytes): (ADType, [UInt8])
        if let short = service.shortValue {
            (type, bytes) = (.completeServiceUUIDs16, [UInt8(truncatingIfNeeded: short), UInt8(short >> 8)])
        } else {
            (type, bytes) = (.completeServiceUUIDs128, service.littleEndianBytes)
        }
        var structures = [ADStructure(type: .flags, data: [0x06]), ADStructure(type: type, data: bytes)]
        // The complete name too when it fits beside them (8 bytes beside a 128-bit UUID): a
        // central then knows the device from one packet, without a scan request; some (Bumble's
        // controller) report the advertisement again in place of a scan response.
        let used = structures.reduce(0) { $0 + 2 + $1.data.count }
        let utf8 = Array(name.utf8)
        if used + 2 + utf8.count <= LegacyAdvertisingPayload.maximumLength {
            structures.append(ADStructure(type: .completeLocalName, data: utf8))
        }
        return AdvertisingData(structures: structures).encoded()
    }

    /// The scan response data: the complete local name, or the shortened one when the name does
    /// not fit in 31 bytes (cut at a character boundary, never inside a UTF-8 sequence).
    /// - Parameter name: the device name, not empty.
    /// - Returns: the data, at most 31 bytes.
    static func scanResponseData(name: String) -> [UInt8] {
        let room = LegacyAdvertisingPayload.maximumLength - 2
        let utf8 = Array(name.utf8)
        guard utf8.count > room else {
            return AdvertisingData(structures: [ADStructure(type: .completeLocalName, data: utf8)]).encoded()
        }
        var shortened: [UInt8] = []
        for character in name {
            let bytes = Array(String(character).utf8)
            guard shortened.count + bytes.count <= room else { break }
            shortened += bytes
        }
        return AdvertisingData(structures: [ADStructure(type: .shortenedLocalName, data: shortened)]).encoded()
    }
}
