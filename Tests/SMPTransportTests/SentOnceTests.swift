import Foundation
import MCUmgr
import SMPCore
import SMPPOSIX
import SMPSerialTransport
import SMPSimulator
import SMPUDPTransport
import Testing

/// A request that changes the device and is not idempotent is sent once, whatever the client's
/// retries say: when its answer is lost the client reports an unknown outcome instead of sending
/// it again. Proven over UDP and over the pty, with a device that loses every answer and counts
/// what it handled. An echo under the same loss is the control: it is sent 1 + retries times, so
/// the count would show a second sending.
@Suite struct SentOnceTests {
    enum Link: String, CaseIterable, Sendable {
        case udp, serial
    }

    /// One request type: how to send it and how often the device handled it.
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var isIdempotent: Bool
        var send: @Sendable (SMPClient) async throws -> Void
        var handled: @Sendable (SimulatedDevice) async -> Int
        var testDescription: String { name }

        init<Request: SMPRequest>(_ name: String, _ request: Request) {
            self.name = name
            isIdempotent = request.isIdempotent
            send = { _ = try await $0.send(request) }
            handled = { await $0.timesHandled(Request.self) }
        }
    }

    static let notIdempotent: [Case] = [
        Case("os reset", OSManagement.Reset()),
        Case("shell exec", ShellManagement.Execute(arguments: ["echo", "hi"])),
        Case("image erase", ImageManagement.Erase(slot: 1)),
        Case(
            "image confirm by hash",
            ImageManagement.StateWrite(hash: Data(repeating: 0xA5, count: 32), confirm: true)
        ),
        Case("settings delete", SettingsManagement.Delete(name: "app/name")),
        Case("basic erase storage", ZephyrBasicManagement.EraseStorage()),
        Case("SUIT cleanup", SUITManagement.Cleanup()),
        Case("SUIT start processing", SUITManagement.EnvelopeUpload(offset: 0, data: nil, length: 0)),
        Case("crash trigger", CrashManagement.Trigger(type: "div0")),
        Case("run test", RunManagement.Test(testName: "all")),
        Case("log clear", LogManagement.Clear()),
        Case("transport connect", TransportManagement.Connect(transport: .init(rawValue: 1))),
        Case("transport disconnect", TransportManagement.Disconnect(all: true)),
    ]

    static let retries = 2

    /// Serves a device that loses every answer, and sends `request` to it over `link`.
    /// - Returns: what the send threw, and how often the device handled the request.
    static func sendWithEveryAnswerLost(_ request: Case, over link: Link) async throws -> (
        error: (any Error)?, handled: Int
    ) {
        let device = SimulatedDevice(configuration: .init(bufferSize: 1024))
        await device.inject(.dropResponses(every: 1))
        let transport: any SMPTransport
        let stop: @Sendable () async -> Void
        switch link {
        case .udp:
            let server = try SimulatedUDPServer(device: device, host: "127.0.0.1", port: 0)
            server.start()
            stop = { await server.stop() }
            transport = UDPTransport(host: "127.0.0.1", port: server.localAddress.port)
        case .serial:
            let server = try SimulatedSerialServer(device: device, framing: .console, baudRate: nil)
            server.start()
            stop = { await server.stop() }
            transport = SerialTransport(path: server.slavePath, baudRate: 115_200, framing: .console())
        }
        var thrown: (any Error)?
        do {
            let client = try await SMPClient.connect(
                transport,
                configuration: .init(timeout: .milliseconds(300), retries: retries)
            )
            do { try await request.send(client) } catch { thrown = error }
            await client.close()
        } catch {
            await stop()
            throw error
        }
        await stop()
        return (thrown, await request.handled(device))
    }

    @Test(arguments: notIdempotent, Link.allCases)
    func aLostAnswerLeavesTheOutcomeUnknownAndTheRequestSentOnce(_ request: Case, link: Link) async throws {
        #expect(!request.isIdempotent)
        let (error, handled) = try await Self.sendWithEveryAnswerLost(request, over: link)
        let failure = try #require(error as? SMPTransportError, "\(String(describing: error))")
        #expect(failure.code == .outcomeUnknown, "\(failure)")
        #expect(handled == 1, "the device handled \(request.name) \(handled) times")
    }

    /// The control: an idempotent request under the same loss is sent again, 1 + retries times.
    @Test(arguments: Link.allCases)
    func anIdempotentRequestIsSentAgain(link: Link) async throws {
        let echo = Case("os echo", OSManagement.Echo(text: "hi"))
        #expect(echo.isIdempotent)
        let (error, handled) = try await Self.sendWithEveryAnswerLost(echo, over: link)
        let failure = try #require(error as? SMPTransportError, "\(String(describing: error))")
        #expect(failure.code == .timeout, "\(failure)")
        #expect(handled == 1 + Self.retries)
    }
}
