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

    static let answers: [AnswerCase] = [
        AnswerCase(
            "count",
            EnumerationManagement.GroupCount(),
            [
                "bf",  // {_
                "65636f756e7409",  //   "count": 9
                "ff",  // }
            ]
        ),
        AnswerCase(
            "list",
            EnumerationManagement.ListGroups(),
            [
                "bf",  // {_
                "6667726f757073",  //   "groups":
                "9f",  //   [_
                "00",  //     0
                "01",  //     1
                "02",  //     2
                "03",  //     3
                "08",  //     8
                "09",  //     9
                "0a",  //     10
                "183f",  //     63
                "1842",  //     66
                "ff",  //   ]
                "ff",  // }
            ]
        ),
        AnswerCase(
            "first group",
            EnumerationManagement.GroupAtIndex(index: 0),
            [
                "bf",  // {_
                "6567726f757000",  //   "group": 0
                "ff",  // }
            ]
        ),
        AnswerCase(
            "last group: end follows",
            EnumerationManagement.GroupAtIndex(index: 8),
            [
                "bf",  // {_
                "6567726f75701842",  //   "group": 66
                "63656e64f5",  //   "end": true
                "ff",  // }
            ]
        ),
        AnswerCase(
            "details",
            EnumerationManagement.GroupDetails(groups: [1, 8]),
            [
                "bf",  // {_
                "6667726f757073",  //   "groups":
                "9f",  //   [_
                "bf",  //     {_
                "6567726f757001",  //       "group": 1
                "646e616d6568696d67206d676d74",  //       "name": "img mgmt"
                "6868616e646c65727307",  //       "handlers": 7
                "ff",  //     }
                "bf",  //     {_
                "6567726f757008",  //       "group": 8
                "646e616d65676673206d676d74",  //       "name": "fs mgmt"
                "6868616e646c65727305",  //       "handlers": 5
                "ff",  //     }
                "ff",  //   ]
                "ff",  // }
            ]
        ),
    ]

    @Test("answers byte for byte as Zephyr's enum_mgmt.c writes them", arguments: answers)
    func answerBytes(_ answer: AnswerCase) async throws {
        try await answer.check()
    }
}
