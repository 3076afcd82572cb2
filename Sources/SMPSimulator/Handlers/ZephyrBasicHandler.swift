import SMPCBOR
import SMPCore

/// Group 63, Zephyr basic: erase the storage partition (where settings live).
enum ZephyrBasicHandler {
    static let group = HandlerGroup(
        group: .zephyrBasic,
        name: "zephyr basic mgmt",
        routes: [
            Route(ZephyrBasicManagement.EraseStorage.self) { _, device, effects in
                device.settings.saved = [:]
                effects.flashTime += ImageHandler.flashDuration(
                    bytes: 0x6000,
                    rate: device.configuration.eraseBytesPerSecond
                )
                return CBORMap()
            }
        ]
    )
}
