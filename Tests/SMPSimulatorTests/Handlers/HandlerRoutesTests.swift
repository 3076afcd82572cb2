import SMPCore
import Testing

@testable import SMPSimulator

/// The device's command table is built from request types: each command is served once, by the
/// group its type belongs to, and the counts the enumeration group reports follow from it.
@Suite struct HandlerRoutesTests {
    @Test func everyCommandIsRoutedOnceByItsOwnGroup() {
        let routes = DeviceCore.handlerGroups.flatMap(\.routes)
        #expect(Set(routes.map(\.command)).count == routes.count, "a command registered twice")
        for group in DeviceCore.handlerGroups {
            #expect(group.routes.allSatisfy { $0.command.group == group.group }, "\(group.name)")
        }
        #expect(DeviceCore.routes.count == routes.count)
    }

    /// Zephyr's handler tables are indexed by command id: the count is the highest id plus one,
    /// as the observed server and Zephyr's sources report them.
    @Test func handlerCountsAreZephyrs() {
        let counts = Dictionary(uniqueKeysWithValues: DeviceCore.handlerGroups.map { ($0.name, $0.handlerCount) })
        #expect(
            counts == [
                "os mgmt": 9, "img mgmt": 7, "stat mgmt": 2, "settings mgmt": 4, "fs mgmt": 5, "shell mgmt": 1,
                "enum mgmt": 4, "zephyr basic mgmt": 1, "suitfu mgmt": 7,
            ]
        )
    }
}
