import SMPCore
import Testing

@testable import SMPSimulator

@Suite("EnumerationHandler")
struct EnumerationHandlerTests {
    @Test("count, list, single by index with end, details")
    func enumeration() async throws {
        var client = try await TestClient()
        let list = try await client.send(EnumerationManagement.ListGroups()).groups
        #expect(list == [0, 1, 2, 3, 8, 9, 10, 63, 66])
        #expect(try await client.send(EnumerationManagement.GroupCount()).count == UInt32(list.count))
        var seen: [UInt16] = []
        var index: UInt32 = 0
        while true {
            let single = try await client.send(EnumerationManagement.GroupAtIndex(index: index))
            seen.append(single.group)
            if single.isLast { break }
            index += 1
        }
        #expect(seen == list)
        let beyond = await deviceError { _ = try await client.send(EnumerationManagement.GroupAtIndex(index: 99)) }
        #expect(beyond?.matches(EnumerationManagement.ReturnCode.indexTooLarge) == true)
        let details = try await client.send(EnumerationManagement.GroupDetails(groups: [1, 8, 500]))
        #expect(details.groups.map(\.group) == [1, 8])
        #expect(details.groups[0].name == "img mgmt")
    }
}
