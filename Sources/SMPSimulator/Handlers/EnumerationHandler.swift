import SMPCBOR
import SMPCore

/// Group 10, enumeration of the groups the device registers (``DeviceCore/handlerGroups``).
enum EnumerationHandler {
    static let group = HandlerGroup(
        group: .enumeration,
        name: "enum mgmt",
        routes: [
            Route(EnumerationManagement.GroupCount.self) { _, _, _ in
                CBORMap(
                    response: EnumerationManagement.GroupCount.Response(count: UInt32(DeviceCore.handlerGroups.count))
                )
            },
            Route(EnumerationManagement.ListGroups.self) { _, _, _ in
                CBORMap(
                    response: EnumerationManagement.ListGroups.Response(
                        groups: DeviceCore.handlerGroups.map(\.group.rawValue)
                    )
                )
            },
            Route(EnumerationManagement.GroupAtIndex.self) { request, _, _ throws(HandlerFailure) in
                try single(request)
            },
            Route(EnumerationManagement.GroupDetails.self) { request, _, _ throws(HandlerFailure) in
                try details(request)
            },
        ]
    )

    static func single(_ request: SMPServerRequest) throws(HandlerFailure) -> CBORMap {
        let groups = DeviceCore.handlerGroups
        let index = Int(try request.decode(EnumerationManagement.GroupAtIndex.self).index ?? 0)
        guard index < groups.count else {
            throw .group(.enumeration, EnumerationManagement.ReturnCode.indexTooLarge.rawValue)
        }
        var map = CBORMap()
        map.put("group", Int(groups[index].group.rawValue))
        if index == groups.count - 1 { map.put("end", true) }
        return map
    }

    static func details(_ request: SMPServerRequest) throws(HandlerFailure) -> CBORMap {
        let wanted = try request.decode(EnumerationManagement.GroupDetails.self).groups
        var details: [CBOR] = []
        for entry in DeviceCore.handlerGroups where wanted?.contains(entry.group.rawValue) ?? true {
            var item = CBORMap()
            item.put("group", Int(entry.group.rawValue))
            item.put("name", entry.name)
            item.put("handlers", entry.handlerCount)
            details.append(.map(item))
        }
        var map = CBORMap()
        map.put("groups", .array(details))
        return map
    }
}
