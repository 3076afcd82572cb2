import SMPCBOR
import SMPCore

/// One command the simulated device serves, registered by the request type it answers: group,
/// command id and operation come from the type, so the wire identity of a command is written
/// once, in SMPCore.
struct Route: Sendable {
    typealias Handler =
        @Sendable (SMPServerRequest, inout DeviceCore, inout DeviceCore.Effects) throws(HandlerFailure) -> CBORMap

    let command: SMPCommandID
    let handle: Handler

    /// Registers a handler for a request type.
    /// - Parameters:
    ///   - request: the request type answered.
    ///   - operation: the operation served, when not the type's own (Zephyr's echo answers a
    ///     read as a write).
    ///   - handle: the handler.
    init<Request: SMPRequest>(_ request: Request.Type, operation: SMPOperation? = nil, _ handle: @escaping Handler) {
        command = SMPCommandID(
            group: Request.group,
            command: Request.command,
            operation: operation ?? Request.operation
        )
        self.handle = handle
    }
}

/// A management group as the device registers it: its name in the enumeration group and the
/// commands it serves.
struct HandlerGroup: Sendable {
    let group: SMPGroup
    /// The name Zephyr's enumeration details report (`os mgmt`, `img mgmt`, …).
    let name: String
    let routes: [Route]

    /// Zephyr's handler table is indexed by command id, so the count it reports is the highest
    /// id served plus one, gaps included.
    var handlerCount: Int { (routes.map { Int($0.command.command) }.max() ?? -1) + 1 }
}

extension DeviceCore {
    /// The groups the device serves, in registration order (the order enumeration lists them).
    static let handlerGroups: [HandlerGroup] = [
        OSHandler.group, ImageHandler.group, StatisticsHandler.group, SettingsHandler.group, FileSystemHandler.group,
        ShellHandler.group, EnumerationHandler.group, ZephyrBasicHandler.group, SUITHandler.group,
    ]

    /// Every route by the command it serves.
    static let routes: [SMPCommandID: Route] = Dictionary(
        handlerGroups.flatMap(\.routes).map { ($0.command, $0) },
        uniquingKeysWith: { first, _ in first }
    )
}
