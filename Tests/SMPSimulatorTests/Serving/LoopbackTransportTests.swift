import Foundation
import MCUmgr
import SMPCore
import SMPLink
import SMPTestSupport
import Testing

@testable import SMPSimulator

@Suite("LoopbackTransport")
struct LoopbackTransportTests {
    @Test("the connection's frame size is the device buffer; larger frames are refused")
    func frameSize() async throws {
        let device = SimulatedDevice(configuration: .init(bufferSize: 256))
        let connection = try await LoopbackTransport(device: device).connect()
        #expect(connection.maximumFrameSize == 256)
        await #expect(throws: SMPTransportError(.frameTooLarge)) {
            try await connection.send(Array(repeating: 0, count: 300))
        }
        await connection.close()
    }

    @Test("send hands the request over and returns without waiting for the answer")
    func sendDoesNotWaitForTheAnswer() async throws {
        // A device that takes longer than any test to handle a request: a send that waited for
        // the answer would never return.
        let device = SimulatedDevice(configuration: .init(requestProcessingTime: .seconds(3600)))
        let connection = try await LoopbackTransport(device: device).connect()
        let collector = FrameCollector(connection.frames)
        try await connection.send(SMPFrame.request(OSManagement.Echo(text: "later"), sequence: 0).bytes)
        #expect(collector.pendingCount == 0)
        #expect(await device.buffersHeld == 1)
        await connection.close()
    }

    @Test("pipelined requests are answered after send returns, in the order they were sent")
    func answersArriveInOrder() async throws {
        let device = SimulatedDevice()
        let connection = try await LoopbackTransport(device: device).connect()
        let collector = FrameCollector(connection.frames)
        // Three in flight: buf_count − 1, so every one finds a buffer for itself and its answer.
        for sequence in UInt8(0)..<3 {
            try await connection.send(
                SMPFrame.request(OSManagement.Echo(text: "\(sequence)"), sequence: sequence).bytes
            )
        }
        var sequences: [UInt8] = []
        while sequences.count < 3, let frame = await collector.next(timeout: .seconds(10)) {
            sequences.append(frame[6])
        }
        #expect(sequences == [0, 1, 2])
        await connection.close()
    }

    @Test("a disconnect fault ends the frame stream with a disconnected error and refuses further sends")
    func disconnect() async throws {
        let device = SimulatedDevice()
        await device.inject(.disconnectOnReset)
        let connection = try await LoopbackTransport(device: device).connect()
        var iterator = connection.frames.makeAsyncIterator()
        try await connection.send(SMPFrame.request(OSManagement.Reset(), sequence: 1).bytes)
        #expect(try await iterator.next() != nil)
        await #expect(throws: SMPTransportError(.disconnected)) { _ = try await iterator.next() }
        await #expect(throws: SMPTransportError(.disconnected)) {
            try await connection.send(SMPFrame.request(OSManagement.Echo(text: "x"), sequence: 2).bytes)
        }
    }

    @Test("link latency delays delivery; reorder and duplicate faults reach the client")
    func latencyAndFaults() async throws {
        // On the device's clock (a test clock): the answer is delivered after the link's latency,
        // not a tick before.
        let clock = ManualClock()
        var configuration = SimulatedDevice.Configuration(linkLatency: .milliseconds(20))
        configuration.requestProcessingTime = .zero
        configuration.clock = SMPClock(clock)
        let client = try await TestClient(SimulatedDevice(configuration: configuration))
        try await client.connection.send(SMPFrame.request(OSManagement.Echo(text: "slow"), sequence: 1).bytes)
        _ = try await RealIO.poll(timeout: .seconds(60)) { clock.sleeperCount == 1 ? true : nil }
        clock.advance(by: .milliseconds(19))
        #expect(await client.collector.next(timeout: .zero) == nil)
        clock.advance(by: .milliseconds(1))
        #expect(try await client.nextFrame() != nil)

        let fast = SimulatedDevice()
        await fast.setFaults(Faults([.reorderResponses(every: 1), .duplicateResponses(every: 3)]))
        let connection = try await LoopbackTransport(device: fast).connect()
        let collector = FrameCollector(connection.frames)
        for sequence in UInt8(1)...4 {
            try await connection.send(
                SMPFrame.request(OSManagement.Echo(text: "\(sequence)"), sequence: sequence).bytes
            )
        }
        // Wait long for the four expected answers (a loaded machine is slow), then briefly for
        // an unexpected fifth.
        var received: [UInt8] = []
        while received.count < 4, let frame = await collector.next(timeout: .seconds(10)) { received.append(frame[6]) }
        if let extra = await collector.next(timeout: .milliseconds(200)) { received.append(extra[6]) }
        // 1 held; 2 sent, then 1; 3 held (a held response is not also doubled); 4 sent, then 3.
        #expect(received == [2, 1, 4, 3])
        await connection.close()
    }

    @Test("the transport describes itself")
    func description() {
        #expect(LoopbackTransport(device: SimulatedDevice()).endpointDescription == "sim://loopback")
    }
}
