import SMPCBOR
import SMPCore

/// Group 10, enumeration of the groups the handler table serves.
enum EnumerationHandler {
    static func handle(_ request: SMPServerRequest, device: inout DeviceCore) throws(HandlerFailure) -> CBORMap {
        let groups = DeviceCore.groups
        var map = CBORMap()
        switch (request.header.command, request.isRead) {
        case (0, true):
            map.put("count", groups.count)
        case (1, true):
            map.put("groups", .array(groups.map { CBOR(Int($0.group.rawValue)) }))
        case (2, true):
            let index = Int(try request.decode(EnumerationManagement.GroupAtIndex.self).index ?? 0)
            guard index < groups.count else {
                throw .group(.enumeration, EnumerationManagement.ReturnCode.indexTooLarge.rawValue)
            }
            map.put("group", Int(groups[index].group.rawValue))
            if index == groups.count - 1 { map.put("end", true) }
        case (3, true):
            let wanted = try request.decode(EnumerationManagement.GroupDetails.self).groups
            var details: [CBOR] = []
            for entry in groups where wanted?.contains(entry.group.rawValue) ?? true {
                var item = CBORMap()
                item.put("group", Int(entry.group.rawValue))
                item.put("name", entry.name)
                item.put("handlers", entry.handlers)
                details.append(.map(item))
            }
            map.put("groups", .array(details))
        default:
            throw .management(.notSupported)
        }
        return map
    }
}
