import Testing

@testable import SMPDBus

struct DBusMessageFramerTests {
    static func messages() throws -> [[UInt8]] {
        try (1...5).map { index in
            try DBusMessage(
                kind: .signal,
                serial: UInt32(index),
                path: "/a",
                interface: "a.b",
                member: "S",
                body: [.bytes(Array(repeating: UInt8(index), count: index * 37))]
            ).encoded()
        }
    }

    @Test(arguments: [1, 2, 3, 7, 16, 100, 4096])
    func dripFedBytesComeOutAsWholeMessages(chunk: Int) throws {
        let messages = try Self.messages()
        let stream = messages.flatMap { $0 }
        var framer = DBusMessageFramer()
        var out: [[UInt8]] = []
        var index = 0
        while index < stream.count {
            framer.append(stream[index..<min(stream.count, index + chunk)])
            index += chunk
            while let message = try framer.next() { out.append(message) }
        }
        #expect(out == messages)
        #expect(framer.bufferedByteCount == 0)
    }

    @Test func aHeaderAnnouncingMoreThan128MiBIsAnError() throws {
        var bytes = try Self.messages()[0]
        bytes.replaceSubrange(4..<8, with: [0, 0, 0, 0x10])
        var framer = DBusMessageFramer()
        framer.append(bytes)
        #expect(throws: DBusError(.limitExceeded)) { try framer.next() }
    }

    @Test func garbageIsAnError() throws {
        var framer = DBusMessageFramer()
        framer.append(Array("HTTP/1.1 200 OK\r\n\r\n".utf8))
        #expect(throws: DBusError(.malformedMessage)) { try framer.next() }
    }
}
