import Foundation
import SMPCBOR
import SMPCore

/// Group 3, settings: run-time values, saved values, load/save/commit as Zephyr's
/// `settings_mgmt.c` exposes them.
enum SettingsHandler {
    /// `CONFIG_MCUMGR_GRP_SETTINGS_NAME_LEN`.
    static let maximumNameLength = 64
    /// `CONFIG_MCUMGR_GRP_SETTINGS_VALUE_LEN`: the largest value read back.
    static let maximumValueLength = 256

    static let group = HandlerGroup(
        group: .settings,
        name: "settings mgmt",
        routes: [
            Route(SettingsManagement.Read.self) { request, device, _ throws(HandlerFailure) in
                try read(request, device: device)
            },
            Route(SettingsManagement.Write.self) { request, device, _ throws(HandlerFailure) in
                let write = try request.decode(SettingsManagement.Write.self)
                try checkName(write.name)
                device.settings.runtime[write.name] = Array(write.value)
                return CBORMap()
            },
            Route(SettingsManagement.Delete.self) { request, device, _ throws(HandlerFailure) in
                let delete = try request.decode(SettingsManagement.Delete.self)
                try checkName(delete.name)
                device.settings.runtime[delete.name] = nil
                device.settings.saved[delete.name] = nil
                return CBORMap()
            },
            Route(SettingsManagement.Commit.self) { _, _, _ in CBORMap() },
            Route(SettingsManagement.Load.self) { _, device, _ in
                device.settings.runtime.merge(device.settings.saved) { _, saved in saved }
                return CBORMap()
            },
            Route(SettingsManagement.Save.self) { request, device, _ throws(HandlerFailure) in
                try save(request, device: &device)
            },
        ]
    )

    static func read(_ request: SMPServerRequest, device: DeviceCore) throws(HandlerFailure) -> CBORMap {
        let read = try request.decode(SettingsManagement.Read.self)
        try checkName(read.name)
        guard let value = device.settings.runtime[read.name] else {
            throw .group(.settings, SettingsManagement.ReturnCode.keyNotFound.rawValue)
        }
        var limit = maximumValueLength
        if let requested = read.maxSize { limit = min(limit, Int(requested)) }
        // The device's limit is reported only to a client that asked for more.
        let askedForMore = Int(read.maxSize ?? 0) > maximumValueLength
        return CBORMap(
            response: SettingsManagement.Read.Response(
                value: Data(value.prefix(limit)),
                maxSize: askedForMore ? UInt32(maximumValueLength) : nil
            )
        )
    }

    static func save(_ request: SMPServerRequest, device: inout DeviceCore) throws(HandlerFailure) -> CBORMap {
        let save = try request.decode(SettingsManagement.Save.self)
        if let subtree = save.name, !subtree.isEmpty {
            for (key, value) in device.settings.runtime where key == subtree || key.hasPrefix(subtree + "/") {
                device.settings.saved[key] = value
            }
        } else {
            device.settings.saved = device.settings.runtime
        }
        return CBORMap()
    }

    private static func checkName(_ name: String) throws(HandlerFailure) {
        guard !name.isEmpty else { throw .management(.invalidValue) }
        guard name.utf8.count <= maximumNameLength else {
            throw .group(.settings, SettingsManagement.ReturnCode.keyTooLong.rawValue)
        }
    }
}
