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
        return answer(StatisticsManagement.GroupData.Response(name: name, fields: fields), device)
    }

    static func list(_ device: DeviceCore) -> CBORMap {
        answer(StatisticsManagement.ListGroups.Response(groups: groups(device).map(\.name)), device)
    }

    /// Zephyr 3.4's statistics handlers write `"rc": 0` into their success answers, first.
    static func answer(_ response: some Encodable, _ device: DeviceCore) -> CBORMap {
        device.configuration.release == .v3_4
            ? CBORMap(returnCode: .ok, response: response) : CBORMap(response: response)
    }

    /// The statistics groups and their current values.
    static func groups(_ device: DeviceCore) -> [(name: String, fields: SMPNamedValues<UInt64>)] {
        [
            ("smp_svr_stats", ["ticks": UInt64(clamping: device.requestCount)]),
            (
                "mcumgr",
                [
                    "requests": UInt64(clamping: device.requestCount), "boots": UInt64(clamping: device.bootCount),
                    "upload_offset": UInt64(clamping: device.upload?.offset ?? 0),
                ]
            ),
        ]
    }
}
