import SMPCBOR
import SMPCore

/// Group 63, Zephyr basic: erase the storage partition (where settings live).
enum ZephyrBasicHandler {
    static func handle(
        _ request: SMPServerRequest,
        device: inout DeviceCore,
        effects: inout DeviceCore.Effects
    ) throws(HandlerFailure) -> CBORMap {
        guard request.header.command == 0, !request.isRead else { throw .management(.notSupported) }
        device.settings.saved = [:]
        effects.flashTime += ImageHandler.flashDuration(bytes: 0x6000, rate: device.configuration.eraseBytesPerSecond)
        return CBORMap()
    }
}
