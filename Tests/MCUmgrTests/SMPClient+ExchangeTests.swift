import Foundation
import MCUmgr
import SMPCBOR
import SMPCore
import Testing

/// Raw frames: sent with the client's sequence number and version, answered undecoded (an error
/// answer is an answer), a write sent once, a response operation refused before anything is sent.
@Suite struct SMPClientExchangeTests {
    static func client(_ connection: ScriptedConnection, timeout: Duration = .seconds(30)) async -> SMPClient {
        let client = SMPClient(
            connection: connection,
            configuration: .init(timeout: timeout, retries: 2, firstSequence: 7)
        )
        await client.start()
        return client
    }

    static func frame(group: UInt16, command: UInt8, _ operation: SMPOperation, _ payload: CBOR) throws -> SMPFrame {
        try SMPFrame(
            header: SMPHeader(
                operation: operation,
                length: 0,
                group: SMPGroup(rawValue: group),
                sequence: 0,
                command: command
            ),
            payload: CBORWriter.encode(payload)
        )
    }

    @Test func aFrameOfAnyGroupIsSentAndItsAnswerReturnedWhole() async throws {
        let connection = ScriptedConnection { request in
            [ScriptedConnection.reply(request, ["rc": 8])]
        }
        let client = await Self.client(connection)
        let exchange = try await client.exchange(try Self.frame(group: 77, command: 3, .write, ["x": 1]))
        #expect(exchange.request.header.sequence == 7)
        #expect(exchange.request.header.group.rawValue == 77)
        #expect(exchange.request.payload == CBORWriter.encode(["x": 1]))
        #expect(exchange.response.header.operation == .writeResponse)
        #expect(try exchange.response.payloadValue() == ["rc": 8])
        #expect(connection.sent.count == 1)
        await client.close()
    }

    @Test func aWriteWithoutAnAnswerIsSentOnce() async throws {
        let connection = ScriptedConnection { _ in [] }
        let client = await Self.client(connection, timeout: .milliseconds(50))
        await #expect(throws: SMPTransportError.self) {
            _ = try await client.exchange(try Self.frame(group: 0, command: 0, .write, ["d": "hi"]))
        }
        #expect(connection.sent.count == 1)
        await client.close()
    }

    @Test func aResponseOperationIsNoRequest() async throws {
        let connection = ScriptedConnection { _ in [] }
        let client = await Self.client(connection)
        await #expect(throws: SMPError.self) {
            _ = try await client.exchange(try Self.frame(group: 0, command: 0, .readResponse, [:]))
        }
        #expect(connection.sent.isEmpty)
        await client.close()
    }
}
