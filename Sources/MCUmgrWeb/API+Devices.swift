import Foundation
import Hummingbird
import MCUmgr
import SMPCore

/// Devices: add by URL, profiles and recent URLs, info, echo, reset, reconnect.
extension API {
    struct DeviceSummary: Codable, Sendable {
        var id: String
        var url: String
        var link: String
    }

    struct Connections: Codable, Sendable {
        struct Profile: Codable, Sendable {
            var name: String
            var url: String
        }

        var profiles: [Profile]
        var profileError: String?
        var recent: [String]
        var devices: [DeviceSummary]
    }

    struct AddDevice: Codable, Sendable { var url: String }
    struct EchoRequest: Codable, Sendable { var text: String }
    struct EchoAnswer: Codable, Sendable { var echo: String }
    struct Done: Codable, Sendable { var done: String }

    struct DeviceInfo: Codable, Sendable {
        var device: DeviceSummary
        var os: String?
        var bufferSize: UInt32?
        var bufferCount: UInt32?
        var bootloader: String?
        var bootloaderMode: String?
        var noDowngrade: Bool?
        /// What could not be read (a device without the command), one line each.
        var unavailable: [String]
    }

    static func summary(_ session: DeviceSession) async -> DeviceSummary {
        DeviceSummary(id: session.id, url: session.url, link: await session.link.rawValue)
    }

    func registerDevices(on router: Router<BasicRequestContext>) {
        router.get("/api/connections") { _, _ in
            try await answer {
                var result = Connections(profiles: [], profileError: nil, recent: await registry.recent, devices: [])
                do {
                    result.profiles = try environment.profiles().map { .init(name: $0.name, url: $0.url) }
                } catch {
                    result.profileError = environment.describe(error)
                }
                for session in await registry.all { result.devices.append(await Self.summary(session)) }
                return try Self.json(result)
            }
        }
        router.post("/api/devices") { request, _ in
            try await answer {
                let body = try await Self.body(AddDevice.self, from: request)
                let session = try await registry.open(body.url)
                // Connecting is what "Connect" promises: a device that does not answer says so now.
                _ = try await session.withClient { try await $0.send(OSManagement.MCUmgrParameters()) }
                return try Self.json(await Self.summary(session))
            }
        }
        router.get("/api/devices/:id") { _, context in
            try await answer {
                let session = try await registry.session(context.parameters.require("id"))
                return try Self.json(await Self.summary(session))
            }
        }
        router.post("/api/devices/:id/reconnect") { _, context in
            try await answer {
                let session = try await registry.session(context.parameters.require("id"))
                try await session.reconnect()
                return try Self.json(await Self.summary(session))
            }
        }
        router.get("/api/devices/:id/info") { _, context in
            try await answer {
                let session = try await registry.session(context.parameters.require("id"))
                return try Self.json(try await info(session))
            }
        }
        router.post("/api/devices/:id/echo") { request, context in
            try await answer {
                let session = try await registry.session(context.parameters.require("id"))
                let body = try await Self.body(EchoRequest.self, from: request)
                let answer = try await session.withClient { try await $0.send(OSManagement.Echo(text: body.text)) }
                return try Self.json(EchoAnswer(echo: answer.text))
            }
        }
        router.post("/api/devices/:id/reset") { _, context in
            try await answer {
                let session = try await registry.session(context.parameters.require("id"))
                try await session.checkIdle()
                _ = try await session.withClient { try await $0.send(OSManagement.Reset()) }
                return try Self.json(Done(done: "reset sent"))
            }
        }
    }

    /// The OS, the MCUmgr parameters and the bootloader; each read on its own, so a device
    /// without one command still shows the rest.
    private func info(_ session: DeviceSession) async throws -> DeviceInfo {
        var info = DeviceInfo(device: await Self.summary(session), unavailable: [])
        let parameters = try await session.withClient { try await $0.send(OSManagement.MCUmgrParameters()) }
        info.bufferSize = parameters.bufferSize
        info.bufferCount = parameters.bufferCount
        do {
            info.os = try await session.withClient { try await $0.send(OSManagement.ApplicationInfo(format: "a")) }
                .output
        } catch let error as SMPDeviceError {
            info.unavailable.append("os info: \(environment.describe(error))")
        }
        do {
            let bootloader = try await session.withClient { try await $0.send(OSManagement.BootloaderInfo()) }
            info.bootloader = bootloader.bootloader
            if bootloader.bootloader == "MCUboot" {
                let mode = try await session.withClient {
                    try await $0.send(OSManagement.BootloaderInfo(query: "mode"))
                }
                info.bootloaderMode = mode.mode.map { "\($0)" }
                info.noDowngrade = mode.noDowngrade
            }
        } catch let error as SMPDeviceError {
            info.unavailable.append("bootloader info: \(environment.describe(error))")
        }
        info.device = await Self.summary(session)
        return info
    }
}
