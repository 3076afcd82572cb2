import Foundation
import Hummingbird
import MCUmgr
import SMPCore

/// Statistics: the groups (`mcumgr stat list`) and one group's counters (`mcumgr stat NAME`),
/// in the device's order; a group the device lacks is said as the command line says it.
extension API {
    struct StatGroups: Codable, Sendable { var groups: [String] }
    struct StatGroup: Codable, Sendable {
        struct Counter: Codable, Sendable {
            var name: String
            var value: UInt64
        }

        var name: String
        var fields: [Counter]
    }

    /// A statistics group's name: printable, up to 255 bytes.
    static func statName(_ text: String) throws(WebError) -> String {
        guard !text.isEmpty, text.utf8.count <= 255,
            !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else {
            throw WebError(.badRequest, "Statistics group: give a group's name from the list")
        }
        return text
    }

    func registerStats(on router: Router<BasicRequestContext>) {
        router.get("/api/devices/:id/stats") { _, context in
            try await answer {
                let session = try await registry.session(context.parameters.require("id"))
                let response = try await session.withClient { try await $0.send(StatisticsManagement.ListGroups()) }
                return try Self.json(StatGroups(groups: response.groups))
            }
        }
        // The name in the query: any name a device has passes, escaped by the page.
        router.get("/api/devices/:id/stats/group") { request, context in
            try await answer {
                let session = try await registry.session(context.parameters.require("id"))
                let name = try Self.statName(request.uri.queryParameters["name"].map(String.init) ?? "")
                let url = session.url
                do {
                    let response = try await session.withClient {
                        try await $0.send(StatisticsManagement.GroupData(name: name))
                    }
                    return try Self.json(
                        StatGroup(
                            name: response.name,
                            fields: response.fields.map { StatGroup.Counter(name: $0.name, value: $0.value) }
                        )
                    )
                } catch let refusal as SMPDeviceError where StatisticsManagement.isMissingGroup(refusal) {
                    throw WebError(
                        .notFound,
                        StatisticsManagement.missingGroupMessage(name, listCommand: Self.command(url)("stat list"))
                    )
                }
            }
        }
    }
}
