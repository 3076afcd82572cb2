import Foundation
import SMPCBOR
import SMPCore

/// Group 4, logs, as Apache Mynewt's `log_nmgr` serves them — only with the `mynewt_logs` option:
/// Zephyr has no log group, and the device answers as Zephyr does otherwise. One storage log,
/// `reboot_log`, gains an entry at every boot and keeps it across resets, as Mynewt's reboot log
/// does. Mynewt answers in v1 envelopes: `"rc": 0` in every success.
enum LogHandler {
    static let group = HandlerGroup(
        group: .log,
        name: "log mgmt",
        routes: [
            Route(LogManagement.Show.self) { request, device, _ throws(HandlerFailure) in
                try show(request, device)
            },
            Route(LogManagement.Clear.self) { _, device, _ in
                device.rebootLog.removeAll()
                return CBORMap(returnCode: .ok, response: SMPEmptyResponse())
            },
            Route(LogManagement.ModuleList.self) { _, _, _ in
                CBORMap(returnCode: .ok, response: LogManagement.ModuleList.Response(modules: modules))
            },
            Route(LogManagement.LevelList.self) { _, _, _ in
                CBORMap(returnCode: .ok, response: LogManagement.LevelList.Response(levels: levels))
            },
            Route(LogManagement.List.self) { _, _, _ in
                CBORMap(returnCode: .ok, response: LogManagement.List.Response(logNames: [logName]))
            },
        ]
    )

    /// The routes by command, consulted only when the device serves the group.
    static let routes: [SMPCommandID: Route] = Dictionary(
        group.routes.map { ($0.command, $0) },
        uniquingKeysWith: { first, _ in first }
    )

    static let logName = "reboot_log"
    /// Mynewt's `LOG_TYPE_STORAGE`.
    static let storageType = 2
    /// Mynewt's module ids for the modules this log writes, and its levels.
    static let modules: SMPNamedValues<Int> = ["DEFAULT": 0, "OS": 1, "NEWTMGR": 2, "REBOOT": 4]
    static let levels: SMPNamedValues<Int> = ["DEBUG": 0, "INFO": 1, "WARN": 2, "ERROR": 3, "CRITICAL": 4]

    static func show(_ request: SMPServerRequest, _ device: DeviceCore) throws(HandlerFailure) -> CBORMap {
        let query = try request.decode(LogManagement.Show.self)
        if let name = query.logName, name != logName { throw .management(.noEntry) }
        let entries = device.rebootLog.filter {
            $0.index >= (query.index ?? 0) && $0.timestamp >= (query.timestamp ?? Int64.min)
        }
        let next = (device.rebootLog.last?.index).map { $0 + 1 } ?? device.nextLogIndex
        return CBORMap(
            returnCode: .ok,
            response: LogManagement.Show.Response(
                nextIndex: next,
                logs: [LogManagement.Show.Log(name: logName, type: storageType, entries: entries)]
            )
        )
    }
}

extension DeviceCore {
    /// Writes the reboot log's entry for the boot that just happened, as Mynewt's `log_reboot`
    /// does: the reason, the boot count and the image that runs.
    /// - Parameter reason: `POWER_ON`, `SOFT` or `PIN` (the reset button).
    mutating func logBoot(reason: String) {
        guard configuration.mynewtLogs else { return }
        let active = bootloader.stateList().first { $0.isActive && $0.imageNumber == 0 }
        let running: String = active.map { "\($0.version)" } ?? "none"
        let entry = LogManagement.Show.Entry(
            message: .text("rsn:\(reason), cnt:\(bootCount), img:\(running)"),
            timestamp: Int64(now.timeIntervalSince1970 * 1_000_000),
            level: 4,  // CRITICAL, as Mynewt logs reboots
            index: nextLogIndex,
            module: 4  // REBOOT
        )
        nextLogIndex += 1
        rebootLog.append(entry)
    }
}
