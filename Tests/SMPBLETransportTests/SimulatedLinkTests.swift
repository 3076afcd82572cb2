import Foundation
import MCUboot
import MCUmgr
import MCUmgrCommands
import MCUmgrDFU
import SMPCore
import SMPSimulator
import Testing

@testable import SMPBLETransport

enum BLEHarness {
    static let client = SMPClient.Configuration(
        timeout: .milliseconds(300),
        retries: 4,
        busyBackoff: .milliseconds(2),
        firstSequence: 0
    )

    /// For tests where an answer is lost or held and must cost a short timeout, but where giving
    /// up is not what is tested: the device may stay silent for 201 × 300 ms (60 s; an upload's
    /// chunk timeout backs off meanwhile). Beside stress-ng and the rest of the suite the
    /// simulated link was held back for over 10 s.
    static let longSilence = SMPClient.Configuration(
        timeout: .milliseconds(300),
        retries: 200,
        busyBackoff: .milliseconds(2),
        firstSequence: 0
    )

    /// For tests where no answer is ever lost: a timeout that only has to outlast a loaded
    /// machine (300 ms × 5 did not, while fuzzers held both cores; 3 s × 2 did not beside
    /// stress-ng and the rest of the suite), never reached when all is well.
    static let patientClient = SMPClient.Configuration(
        timeout: .seconds(3),
        retries: 19,
        busyBackoff: .milliseconds(2),
        firstSequence: 0
    )

    static func profile(mtu: Int, reassembly: Bool = true, buffer: Int = 1024) -> BLELinkProfile {
        BLELinkProfile(
            name: "test",
            phy: .le2M,
            attMTU: mtu,
            dataLength: 251,
            connectionIntervalMilliseconds: 15,
            deviceReassembly: reassembly,
            deviceBufferSize: buffer,
            deviceBufferCount: 4
        )
    }

    static func peripheral(_ profile: BLELinkProfile) -> SimulatedBLEPeripheral {
        SimulatedBLEPeripheral(profile: profile, settle: .zero)
    }

    /// A peripheral whose device has the observed reset timing: it answers `os reset`, runs on
    /// for 250 ms, reboots (the link drops) and is back after about a second.
    static func peripheralWithObservedResetTiming(_ profile: BLELinkProfile) -> SimulatedBLEPeripheral {
        let device = SimulatedDevice(
            configuration: .init(bufferSize: profile.deviceBufferSize, bufferCount: profile.deviceBufferCount)
        )
        return SimulatedBLEPeripheral(profile: profile, device: device, settle: .zero)
    }

    static func image(size: Int, version: (UInt8, UInt8) = (2, 0)) throws -> (data: Data, hash: Data) {
        let data = try BLEBenchmark.syntheticImage(size: size, version: version)
        let hash = try #require(try MCUbootImage(bytes: Array(data)).hash)
        return (data, Data(hash))
    }

    /// Reads the device's parameters, asking again after a timeout. The 300 ms timeout of a test
    /// without retries is meant for what the test measures; this request meets a machine that
    /// other suites can stall for a while (they run peer tools synchronously).
    static func loadParameters(_ client: SMPClient) async throws {
        var timeouts = 0
        while true {
            do {
                try await client.loadParameters()
                return
            } catch let error as SMPTransportError where error.code == .timeout && timeouts < 4 {
                timeouts += 1
            }
        }
    }

    /// Whether the secondary slot holds the image with this hash.
    static func slotOneHolds(_ hash: Data, on device: SimulatedDevice) async -> Bool {
        await device.imageStates.contains { $0.slot == 1 && $0.hash == hash }
    }
}

@Suite struct SimulatedLinkTests {
    /// The real core over the simulated radio at every ATT MTU from 23 to 517: a request and a
    /// response of several notifications each, reassembled on both sides.
    @Test func echoAtEveryMTU() async throws {
        let text = String(repeating: "0123456789", count: 60)
        for mtu in 23...517 {
            let peripheral = BLEHarness.peripheral(BLEHarness.profile(mtu: mtu))
            let client = try await SMPClient.connect(
                GATTTransport.simulated(peripheral),
                configuration: BLEHarness.patientClient
            )
            // A 620-byte request needs the device's buffer size, read then (once).
            let answer = try await client.send(OSManagement.Echo(text: text))
            #expect(await client.maximumFrameSize == 1024, "MTU \(mtu)")
            #expect(answer.text == text, "MTU \(mtu)")
            #expect(await peripheral.notificationCount >= 1 + (600 + 20) / (mtu - 3), "MTU \(mtu)")
            await client.close()
        }
    }

    /// Without device reassembly every frame is one write: at every ATT MTU the client sizes its
    /// requests to the write length and the echo of the longest text that fits comes back.
    @Test func echoWithoutReassemblyAtEveryMTU() async throws {
        for mtu in 23...517 {
            let peripheral = BLEHarness.peripheral(BLEHarness.profile(mtu: mtu, reassembly: false, buffer: 1024))
            let client = try await SMPClient.connect(
                GATTTransport.simulated(peripheral),
                configuration: BLEHarness.patientClient
            )
            #expect(await client.maximumFrameSize == mtu - 3, "MTU \(mtu)")
            // 8-byte header, {"d": text}: 3 bytes, the text's 1-, 2- or 3-byte head, the text.
            func frameSize(_ count: Int) -> Int { 8 + 3 + (count < 24 ? 1 : count < 256 ? 2 : 3) + count }
            var count = 0
            while frameSize(count + 1) <= mtu - 3 { count += 1 }
            let text = String(repeating: "s", count: count)
            let answer = try await client.send(OSManagement.Echo(text: text))
            #expect(answer.text == text, "MTU \(mtu)")
            await #expect(throws: SMPTransportError(.frameTooLarge), "MTU \(mtu)") {
                try await client.send(OSManagement.Echo(text: text + "s"))
            }
            await client.close()
        }
    }

    /// A frame larger than the modelled controller buffer (legacy: 8 packets, 384-byte frames of
    /// 20 writes) is refused write by write and waited out; the upload completes.
    @Test func controllerBufferFlowControl() async throws {
        let peripheral = BLEHarness.peripheral(.legacy)
        let client = try await SMPClient.connect(
            GATTTransport.simulated(peripheral),
            configuration: BLEHarness.patientClient
        )
        let image = try BLEHarness.image(size: 6000)
        try await client.uploadAndWait(ImageUpload(data: image.data), options: .init(window: 2))
        #expect(await peripheral.bufferFullCount > 0)
        #expect(await BLEHarness.slotOneHolds(image.hash, on: peripheral.device))
        await client.close()
    }

    /// Pipelined uploads at every window, with reassembly and without (frames of one write).
    @Test(arguments: [true, false], [1, 2, 3, 4])
    func pipelinedUpload(reassembly: Bool, window: Int) async throws {
        let peripheral = BLEHarness.peripheral(BLEHarness.profile(mtu: 247, reassembly: reassembly, buffer: 2475))
        let client = try await SMPClient.connect(
            GATTTransport.simulated(peripheral),
            configuration: BLEHarness.patientClient
        )
        // With reassembly the device's buf_size bounds frames: known once the parameters are read.
        try await client.loadParameters()
        #expect(await client.maximumFrameSize == (reassembly ? 2475 : 244))
        let image = try BLEHarness.image(size: 24_000)
        let progress = try await client.uploadAndWait(ImageUpload(data: image.data), options: .init(window: window))
        #expect(progress.bytesConfirmed == image.data.count)
        #expect(await BLEHarness.slotOneHolds(image.hash, on: peripheral.device))
        #expect(await peripheral.modelledTime > 0)
        await client.close()
    }

    /// A response that loses its tail times out; the retry's answer is read from its own header
    /// (the stale head was dropped after the silence) and later requests are unaffected.
    @Test func aTruncatedResponseIsRetriedAndTheStreamRecovers() async throws {
        let peripheral = BLEHarness.peripheral(.legacy)
        await peripheral.inject(.truncateResponse(afterResponses: 1))
        let client = try await SMPClient.connect(
            GATTTransport.simulated(peripheral, reassemblyIdleTimeout: .milliseconds(100)),
            configuration: BLEHarness.longSilence
        )
        let text = String(repeating: "long enough for several notifications ", count: 3)
        #expect(try await client.send(OSManagement.Echo(text: text)).text == text)
        #expect(try await client.send(OSManagement.Echo(text: "after")).text == "after")
        let image = try BLEHarness.image(size: 3000)
        try await client.uploadAndWait(ImageUpload(data: image.data), options: .init(window: 2))
        #expect(await BLEHarness.slotOneHolds(image.hash, on: peripheral.device))
        await client.close()
    }

    /// Duplicated and reordered responses (interleaved sequence numbers) while pipelining.
    @Test func duplicateAndInterleavedResponses() async throws {
        let peripheral = BLEHarness.peripheral(BLEHarness.profile(mtu: 185, buffer: 1024))
        await peripheral.device.setFaults(Faults([.duplicateResponses(every: 2), .reorderResponses(every: 3)]))
        let client = try await SMPClient.connect(
            GATTTransport.simulated(peripheral),
            configuration: BLEHarness.longSilence
        )
        let image = try BLEHarness.image(size: 20_000)
        try await client.uploadAndWait(ImageUpload(data: image.data), options: .init(window: 4))
        #expect(await BLEHarness.slotOneHolds(image.hash, on: peripheral.device))
        await client.close()
    }

    /// A 20 s write stall (no room in the controller, no ready callback) slows the transfer and
    /// fails nothing, although it is twice the client's 10 s request timeout (with no retries): a
    /// request's timeout runs from its sending, not from its queueing. (10 s, not less: beside
    /// stress-ng and the rest of the suite an answer came 4.9 s after its chunk was sent.)
    @Test func writeStallIsBackPressure() async throws {
        let peripheral = BLEHarness.peripheral(BLEHarness.profile(mtu: 247, buffer: 2475))
        let client = try await SMPClient.connect(
            GATTTransport.simulated(peripheral),
            configuration: .init(timeout: .seconds(10), retries: 0, firstSequence: 0)
        )
        // The client reads the device's parameters once, before its first transfer: read them
        // now so that the stall falls inside the upload's stream of writes, not on that request.
        try await BLEHarness.loadParameters(client)
        await peripheral.inject(.writeStall(afterWrites: 12, duration: .seconds(20)))
        let image = try BLEHarness.image(size: 12_000)
        try await client.uploadAndWait(ImageUpload(data: image.data), options: .init(window: 1))
        #expect(await peripheral.stallsServed == 1)
        #expect(await BLEHarness.slotOneHolds(image.hash, on: peripheral.device))
        await client.close()
    }

    /// The link drops mid-transfer: the upload fails with `.disconnected`; a new connection
    /// resumes from the device's offset and completes.
    @Test func disconnectMidTransferThenReconnect() async throws {
        let peripheral = BLEHarness.peripheral(BLEHarness.profile(mtu: 247, buffer: 2475))
        let transport = GATTTransport.simulated(peripheral)
        let image = try BLEHarness.image(size: 30_000)
        // Nothing is lost but the link: patient timeouts, which a loaded machine cannot reach.
        let first = try await SMPClient.connect(transport, configuration: BLEHarness.patientClient)
        await peripheral.inject(.disconnect(afterWrites: 40))
        await #expect(throws: SMPTransportError(.disconnected)) {
            try await first.uploadAndWait(ImageUpload(data: image.data), options: .init(window: 3))
        }
        let offset = await peripheral.device.uploadSession?.offset ?? 0
        #expect(offset > 0)
        let second = try await SMPClient.connect(transport, configuration: BLEHarness.patientClient)
        try await second.uploadAndWait(ImageUpload(data: image.data), options: .init(window: 3))
        #expect(await BLEHarness.slotOneHolds(image.hash, on: peripheral.device))
        #expect(await peripheral.connectionCount == 2)
        await second.close()
    }

    /// A whole test-and-confirm upgrade over the link: upload, test, reset (the device drops the
    /// link), reconnect, confirm, verify — on the slow legacy profile and the reassembly one.
    @Test(arguments: [BLELinkProfile.legacy, .reassembly])
    func testAndConfirmUpgrade(profile: BLELinkProfile) async throws {
        let peripheral = BLEHarness.peripheralWithObservedResetTiming(profile)
        let image = try BLEHarness.image(size: 10_000)
        let package = FirmwarePackage.Image(try MCUbootImage(bytes: Array(image.data)), imageIndex: 0, slot: 1)
        let upgrade = FirmwareUpgrade(
            transport: GATTTransport.simulated(peripheral),
            configuration: .init(
                mode: .testAndConfirm,
                firstChunkTimeout: .seconds(5),
                // Nothing is lost here: waits that a loaded machine cannot reach by accident.
                probeTimeout: .seconds(1),
                reconnectTimeout: .seconds(60),
                reconnectInterval: .milliseconds(10)
            ),
            clientConfiguration: BLEHarness.patientClient
        )
        var completed = false
        for try await event in upgrade.run(images: [package]) {
            if case .completed = event { completed = true }
        }
        #expect(completed)
        let states = await peripheral.device.imageStates
        #expect(states.contains { $0.hash == image.hash && $0.isActive && $0.isConfirmed }, "\(states)")
        #expect(await peripheral.connectionCount >= 2)
    }

    /// The window follows the device over BLE as over UDP: the default (`buf_count − 1`) sends
    /// nothing twice; a window forced beyond the device's buffers adapts and still completes.
    /// The device takes 400 ms a chunk (a slow flash write): frames then arrive much faster than
    /// it handles them, even on a loaded machine (at 150 ms a chunk a run beside the rest of the
    /// suite once delivered them slower than that), so requests queue in its buffers — at 0.8 ms
    /// a chunk the link, not the device, would be the bottleneck and no window could run it out
    /// of buffers. The request timeout (20 s) covers three chunks queued ahead of one on a machine
    /// that holds the test back for seconds (5 s did not, beside stress-ng and the suite).
    @Test(arguments: [nil, 8] as [Int?])
    func theWindowAdaptsToTheDevicesBuffers(window: Int?) async throws {
        let profile = BLEHarness.profile(mtu: 247, buffer: 1024)
        let device = SimulatedDevice(
            configuration: .init(
                bufferSize: profile.deviceBufferSize,
                bufferCount: profile.deviceBufferCount,
                requestProcessingTime: .milliseconds(400)
            )
        )
        let peripheral = SimulatedBLEPeripheral(profile: profile, device: device, settle: .zero)
        var configuration = BLEHarness.client
        configuration.timeout = .seconds(20)
        let client = try await SMPClient.connect(GATTTransport.simulated(peripheral), configuration: configuration)
        let image = try BLEHarness.image(size: 12_000)
        var changes: [WindowChange] = []
        var last: TransferProgress?
        for try await event in client.upload(ImageUpload(data: image.data), options: .init(window: window)) {
            switch event {
            case .windowChanged(let change): changes.append(change)
            case .progress(let progress): last = progress
            default: break
            }
        }
        #expect(await BLEHarness.slotOneHolds(image.hash, on: peripheral.device))
        let sentAgain = (last?.bytesSent ?? 0) - image.data.count
        if window == nil {
            #expect(changes.isEmpty, "\(changes)")
            #expect(sentAgain == 0)
            #expect(await peripheral.device.requestsRefusedForBuffers == 0)
        } else {
            print("BLE, window forced to 8: \(changes.map(\.description)), \(sentAgain) bytes sent again")
            #expect(changes.first?.from == 8)
            #expect(changes.contains { $0.reason == .deviceOutOfBuffers || $0.reason == .noAnswer })
        }
        await client.close()
    }

    /// The upgrade survives the link dropping in the middle of the upload.
    @Test func upgradeSurvivesADisconnectMidUpload() async throws {
        let peripheral = BLEHarness.peripheralWithObservedResetTiming(BLEHarness.profile(mtu: 247, buffer: 2475))
        await peripheral.inject(.disconnect(afterWrites: 30))
        let image = try BLEHarness.image(size: 30_000)
        let package = FirmwarePackage.Image(try MCUbootImage(bytes: Array(image.data)), imageIndex: 0, slot: 1)
        let upgrade = FirmwareUpgrade(
            transport: GATTTransport.simulated(peripheral),
            configuration: .init(
                mode: .testAndConfirm,
                window: 3,
                firstChunkTimeout: .seconds(2),
                probeTimeout: .milliseconds(300),
                reconnectTimeout: .seconds(10),
                reconnectInterval: .milliseconds(10),
                retries: 6
            ),
            clientConfiguration: BLEHarness.client
        )
        for try await _ in upgrade.run(images: [package]) {}
        let states = await peripheral.device.imageStates
        #expect(states.contains { $0.hash == image.hash && $0.isActive && $0.isConfirmed }, "\(states)")
    }

    /// The GATT database a development kit shows.
    @Test func gattDatabase() {
        let peripheral = SimulatedBLEPeripheral(profile: .reassembly)
        let services = peripheral.services.map(\.uuid)
        #expect(services == [SMPGATT.serviceUUID, "180A", "180F"])
        let smp = peripheral.services[0].characteristics
        #expect(smp.map(\.uuid) == [SMPGATT.characteristicUUID])
        #expect(smp[0].properties == ["writeWithoutResponse", "notify"])
    }
}

@Suite struct BLELinkProfileTests {
    /// Air time of a full 2M packet (251 bytes) and an empty one, and the 1M equivalent.
    @Test func airTimes() {
        #expect(BLELinkProfile.PHY.le2M.airTime(payload: 251) == 1048)
        #expect(BLELinkProfile.PHY.le2M.airTime(payload: 0) == 44)
        #expect(BLELinkProfile.PHY.le1M.airTime(payload: 27) == 296)
        #expect(BLELinkProfile.PHY.coded.airTime(payload: 0) == 720)
    }

    /// Writes of MTU − 3 bytes take ⌈(n + 7) / DLE⌉ packets.
    @Test func packetsPerWrite() {
        #expect(BLELinkProfile.reassembly.packets(forValueOf: 495) == 2)
        #expect(BLELinkProfile.fast.packets(forValueOf: 244) == 1)
        #expect(BLELinkProfile.legacy.packets(forValueOf: 20) == 1)
        #expect(BLELinkProfile.legacy.packets(forValueOf: 21) == 2)
    }

    /// Named profiles resolve; slots per event never exceed what fits in the interval.
    @Test func namedProfiles() {
        for profile in BLELinkProfile.all {
            #expect(BLELinkProfile.named(profile.name) == profile)
            #expect(
                Double(profile.centralSlotsPerEvent) * profile.exchangeMicroseconds <= profile
                    .connectionIntervalMilliseconds * 1000 || profile.centralSlotsPerEvent == 1
            )
        }
        #expect(BLELinkProfile.named("nope") == nil)
    }

    /// The modelled transfer never beats the link's theoretical capacity, and pipelining with
    /// reassembly does not lose to one request at a time.
    @Test func benchmarkStaysWithinCapacity() async throws {
        let (one, best) = try await BLEBenchmark.windowOneAndBest(profile: .reassembly, size: 40_000)
        #expect(one.bytes >= 40_000 - 64)
        #expect(best.bytesPerSecond <= BLELinkProfile.reassembly.theoreticalWriteCapacity)
        #expect(one.bytesPerSecond <= best.bytesPerSecond)
        #expect(best.frameSize == 2475)
    }
}
