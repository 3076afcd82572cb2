import SMPCBOR
import SMPCore

/// Group 2, statistics, with the `smp_svr` sample's groups.
enum StatisticsHandler {
    static let group = HandlerGroup(
        group: .statistics,
        name: "stat mgmt",
        routes: [
            Route(StatisticsManagement.GroupData.self) { request, device, _ throws(HandlerFailure) in
                try groupData(request, device: device)
            },
            Route(StatisticsManagement.ListGroups.self) { _, device, _ in list(device) },
        ]
    )

    static func groupData(_ request: SMPServerRequest, device: DeviceCore) throws(HandlerFailure) -> CBORMap {
        let name = try request.decode(StatisticsManagement.GroupData.self).name
        guard let fields = groups(device).first(where: { $0.name == name })?.fields else {
            // Zephyr up to 4.3 names the wrong group (63, Zephyr basic) in this error.
            let group: SMPGroup = device.configuration.release == .v3_4 ? .zephyrBasic : .statistics
            throw .group(group, StatisticsManagement.ReturnCode.invalidStatName.rawValue)
        }
        var values = CBORMap()
        for (field, value) in fields { values.put(field, value) }
        var map = CBORMap()
        putLegacyReturnCode(&map, device)
        map.put("name", name)
        map.put("fields", .map(values))
        return map
    }

    static func list(_ device: DeviceCore) -> CBORMap {
        var map = CBORMap()
        putLegacyReturnCode(&map, device)
        map.put("stat_list", .array(groups(device).map { .textString($0.name) }))
        return map
    }

    /// Zephyr 3.4's statistics handlers write `"rc": 0` into their success answers.
    static func putLegacyReturnCode(_ map: inout CBORMap, _ device: DeviceCore) {
        if device.configuration.release == .v3_4 { map.put("rc", 0) }
    }

    /// The statistics groups and their current values.
    static func groups(_ device: DeviceCore) -> [(name: String, fields: [(String, Int)])] {
        [
            ("smp_svr_stats", [("ticks", device.requestCount)]),
            (
                "mcumgr",
                [
                    ("requests", device.requestCount), ("boots", device.bootCount),
                    ("upload_offset", device.upload?.offset ?? 0),
                ]
            ),
        ]
    }
}
