import SMPCBOR
import SMPCore

/// Group 2, statistics, with the `smp_svr` sample's groups.
enum StatisticsHandler {
    static func handle(_ request: SMPServerRequest, device: inout DeviceCore) throws(HandlerFailure) -> CBORMap {
        switch (request.header.command, request.isRead) {
        case (0, true):
            let name = try request.decode(StatisticsManagement.GroupData.self).name
            guard let fields = groups(device).first(where: { $0.name == name })?.fields else {
                throw .group(.statistics, StatisticsManagement.ReturnCode.invalidGroup.rawValue)
            }
            var values = CBORMap()
            for (field, value) in fields { values.put(field, value) }
            var map = CBORMap()
            map.put("name", name)
            map.put("fields", .map(values))
            return map
        case (1, true):
            var map = CBORMap()
            map.put("stat_list", .array(groups(device).map { .textString($0.name) }))
            return map
        default:
            throw .management(.notSupported)
        }
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
