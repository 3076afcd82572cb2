import SMPCBOR
import SMPCore

/// Group 10, enumeration of the groups the device registers (``DeviceCore/servedGroups``).
enum EnumerationHandler {
    static let group = HandlerGroup(
        group: .enumeration,
        name: "enum mgmt",
        routes: [
            Route(EnumerationManagement.GroupCount.self) { _, device, _ in
                CBORMap(
                    response: EnumerationManagement.GroupCount.Response(count: UInt32(device.servedGroups.count))
                )
            },
            Route(EnumerationManagement.ListGroups.self) { _, device, _ in
                CBORMap(
                    response: EnumerationManagement.ListGroups.Response(
                        groups: device.servedGroups.map(\.group.rawValue)
                    )
                )
            },
            Route(EnumerationManagement.GroupAtIndex.self) { request, device, _ throws(HandlerFailure) in
                try single(request, groups: device.servedGroups)
            },
            Route(EnumerationManagement.GroupDetails.self) { request, device, _ throws(HandlerFailure) in
                try details(request, groups: device.servedGroups)
            },
        ]
    )

    static func single(_ request: SMPServerRequest, groups: [HandlerGroup]) throws(HandlerFailure) -> CBORMap {
        let index = Int(try request.decode(EnumerationManagement.GroupAtIndex.self).index ?? 0)
        guard index < groups.count else {
            throw .group(.enumeration, EnumerationManagement.ReturnCode.indexTooLarge.rawValue)
        }
        let isLast = index == groups.count - 1
        return CBORMap(
            response: EnumerationManagement.GroupAtIndex.Response(
                group: groups[index].group.rawValue,
                end: isLast ? true : nil
            )
        )
    }

    static func details(_ request: SMPServerRequest, groups: [HandlerGroup]) throws(HandlerFailure) -> CBORMap {
        let wanted = try request.decode(EnumerationManagement.GroupDetails.self).groups
        let details = groups.filter { wanted?.contains($0.group.rawValue) ?? true }.map {
            EnumerationManagement.GroupDetails.Details(
                group: $0.group.rawValue,
                name: $0.name,
                handlers: UInt32(clamping: $0.handlerCount)
            )
        }
        return CBORMap(response: EnumerationManagement.GroupDetails.Response(groups: details))
    }
}
