import Foundation
import SMPCore
import SMPLink

/// A ``SimulatedDevice`` behind a modelled Bluetooth LE radio, seen as a GATT peripheral.
///
/// ``connect()`` returns a ``SimulatedBLELink`` (a `GATTLink`), so the real transport core runs
/// over it: writes are fragments of frames, the device reassembles them by header length (or,
/// without reassembly, drops a write that is not a whole frame, as Zephyr does), and responses
/// come back as notifications of at most ATT MTU − 3 bytes.
///
/// Time is virtual: the link computes when each LL packet is on air (``BLELinkProfile``) and
/// ``modelledTime`` advances with what the central has received, so a transfer's modelled
/// duration does not depend on the machine. Only two things take real time: a short pause
/// (``settle``) before each response is handed over, so the client has sent what it was sending
/// before the next answer arrives, and an injected write stall.
///
/// Like a real device, it drops the connection when it resets; connect again afterwards.
public actor SimulatedBLEPeripheral {
    /// Misbehaviour of the link (the device's own faults are ``SimulatedDevice/inject(_:)``).
    public enum LinkFault: Sendable, Hashable {
        /// The n-th write (counting from the injection) finds the controller buffer full, and
        /// the link is not ready again for `duration` of real time.
        case writeStall(afterWrites: Int, duration: Duration)
        /// The link drops at the n-th write (counting from the injection); that write is lost.
        case disconnect(afterWrites: Int)
        /// The n-th response of more than one notification (counting from the injection) stops
        /// after its first notification, as Zephyr gives up on the rest of a response when a
        /// notification cannot be queued.
        case truncateResponse(afterResponses: Int)
    }

    /// One service of the GATT database.
    public struct Service: Sendable, Hashable {
        /// The service UUID.
        public var uuid: String
        /// Its name.
        public var name: String
        /// Its characteristics.
        public var characteristics: [Characteristic]
    }

    /// One characteristic of the GATT database.
    public struct Characteristic: Sendable, Hashable {
        /// The characteristic UUID.
        public var uuid: String
        /// Its name.
        public var name: String
        /// GATT properties, e.g. `read`, `writeWithoutResponse`, `notify`.
        public var properties: [String]
        /// The value read from it, if readable.
        public var value: [UInt8]?
    }

    /// The device behind the radio.
    public nonisolated let device: SimulatedDevice
    /// The link's timing.
    public nonisolated let profile: BLELinkProfile
    /// The advertised name.
    public nonisolated let name: String
    /// Real time waited before each response is handed to the central.
    public nonisolated let settle: Duration

    private var model: BLELinkModel
    private var now = 0.0
    private var deviceFree = 0.0
    private var linkID = 0
    private var link: SimulatedBLELink?
    private var decoder = SMPStreamDecoder()
    /// The pool buffer of the frame being reassembled; `.some(nil)` when it found none.
    private var reassembling: SimulatedDevice.ReceiveBuffer??
    private var pending: [Pending] = []
    private var releasing = false
    private var faults: [LinkFault] = []
    private var writes = 0
    private var multiNotificationResponses = 0
    private var stall: Duration?

    /// Connections made so far.
    public private(set) var connectionCount = 0
    /// Notifications sent so far.
    public private(set) var notificationCount = 0
    /// Injected write stalls waited out so far.
    public private(set) var stallsServed = 0
    /// Writes refused because the modelled controller buffer was full.
    public private(set) var bufferFullCount = 0
    /// Frames the device lost because its buffer pool was empty when they started to arrive.
    public private(set) var framesLostForBuffers = 0

    private struct Pending {
        var time: Double
        var values: [[UInt8]]
        var link: Int
        var disconnect: Bool
    }

    /// Creates a peripheral.
    /// - Parameters:
    ///   - profile: the link's timing and the device's buffers.
    ///   - device: the device; `nil` creates one with the profile's buffer size and count.
    ///   - name: the advertised name.
    ///   - settle: real time waited before each response is handed over.
    public init(
        profile: BLELinkProfile,
        device: SimulatedDevice? = nil,
        name: String = "Zephyr",
        settle: Duration = .milliseconds(1)
    ) {
        self.profile = profile
        self.device =
            device
            ?? SimulatedDevice(
                configuration: .init(bufferSize: profile.deviceBufferSize, bufferCount: profile.deviceBufferCount)
            )
        self.name = name
        self.settle = settle
        model = BLELinkModel(profile: profile)
    }

    /// The GATT database: the SMP service, Device Information and Battery, as a development kit
    /// running Zephyr's SMP server shows them.
    public nonisolated var services: [Service] {
        [
            Service(
                uuid: SMPGATT.serviceUUID,
                name: "SMP",
                characteristics: [
                    Characteristic(
                        uuid: SMPGATT.characteristicUUID,
                        name: "SMP",
                        properties: ["writeWithoutResponse", "notify"],
                        value: nil
                    )
                ]
            ),
            Service(
                uuid: SMPGATT.deviceInformationServiceUUID,
                name: "Device Information",
                characteristics: [
                    Characteristic(
                        uuid: "2A29",
                        name: "Manufacturer Name",
                        properties: ["read"],
                        value: Array("Zephyr".utf8)
                    ),
                    Characteristic(
                        uuid: "2A24",
                        name: "Model Number",
                        properties: ["read"],
                        value: Array("swift-mcumgr simulator".utf8)
                    ),
                    Characteristic(
                        uuid: "2A26",
                        name: "Firmware Revision",
                        properties: ["read"],
                        value: Array(device.configuration.factoryVersion.utf8)
                    ),
                ]
            ),
            Service(
                uuid: SMPGATT.batteryServiceUUID,
                name: "Battery",
                characteristics: [
                    Characteristic(uuid: "2A19", name: "Battery Level", properties: ["read", "notify"], value: [100])
                ]
            ),
        ]
    }

    /// Modelled time since the first connection, in seconds: when the central received the last
    /// thing handed to it, or later if it waited for the write buffer.
    public var modelledTime: Double { now }

    /// Adds a link fault.
    public func inject(_ fault: LinkFault) {
        if faults.isEmpty {
            writes = 0
            multiNotificationResponses = 0
        }
        faults.append(fault)
    }

    /// Connects (dropping a previous connection, as a peripheral serves one central), discovers
    /// the SMP characteristic and subscribes. Takes six connection intervals of modelled time.
    /// - Returns: the link.
    public func connect() -> SimulatedBLELink {
        if let link { link.end(SMPTransportError(.disconnected, "another connection replaced this one")) }
        linkID += 1
        connectionCount += 1
        now = max(now, deviceFree) + 6 * profile.connectionIntervalMilliseconds / 1000
        model.reconnect(at: now)
        resetReassembly()
        let opened = SimulatedBLELink(peripheral: self, id: linkID, maximumWriteLength: profile.maximumWriteLength)
        link = opened
        return opened
    }

    // MARK: - Link operations

    func write(_ value: [UInt8], link id: Int) async throws -> Bool {
        guard id == linkID, link != nil else { throw SMPTransportError(.disconnected, "the link is down") }
        guard value.count <= profile.maximumWriteLength else {
            throw SMPTransportError.frameTooLarge(
                size: value.count,
                limit: profile.maximumWriteLength,
                "a \(value.count)-byte write exceeds ATT MTU \(profile.attMTU) − 3"
            )
        }
        writes += 1
        if let index = faults.firstIndex(where: { if case .writeStall(writes, _) = $0 { true } else { false } }),
            case .writeStall(_, let duration) = faults[index]
        {
            faults.remove(at: index)
            writes -= 1
            stall = duration
            return false
        }
        if let index = faults.firstIndex(of: .disconnect(afterWrites: writes)) {
            faults.remove(at: index)
            drop(SMPTransportError(.disconnected, "the simulated radio link dropped"))
            throw SMPTransportError(.disconnected, "the simulated radio link dropped")
        }
        if stall != nil { return false }
        guard let arrival = model.write(length: value.count, at: now) else {
            writes -= 1
            bufferFullCount += 1
            return false
        }
        if profile.deviceReassembly {
            // Zephyr's reassembly takes a pool buffer with a frame's first fragment; without one
            // the write fails (lost, for a write without response) and so does the frame.
            for case .frame(let frame) in decoder.feed(value) {
                let buffer: SimulatedDevice.ReceiveBuffer?
                if let started = reassembling {
                    buffer = started
                    reassembling = nil
                } else {
                    buffer = await device.reserveBuffer()
                }
                await process(frame, buffer: buffer, arrival: arrival, link: id)
            }
            if decoder.bufferedByteCount > 0 && reassembling == nil {
                reassembling = .some(await device.reserveBuffer())
            }
        } else {
            // Without reassembly each write is one message; the rest of a partial one is lost.
            var single = SMPStreamDecoder(maximumFrameSize: profile.maximumWriteLength)
            for case .frame(let frame) in single.feed(value) {
                await process(frame, buffer: await device.reserveBuffer(), arrival: arrival, link: id)
            }
        }
        return true
    }

    func waitUntilReady(link id: Int) async throws {
        guard id == linkID, link != nil else { throw SMPTransportError(.disconnected, "the link is down") }
        if let duration = stall {
            try await Task.sleep(for: duration)
            stall = nil
            stallsServed += 1
            now += duration.seconds
            guard id == linkID, link != nil else { throw SMPTransportError(.disconnected, "the link is down") }
            return
        }
        now = model.readyTime(length: profile.maximumWriteLength, at: now)
    }

    func disconnect(link id: Int) {
        guard id == linkID, link != nil else { return }
        link?.end(nil)
        link = nil
    }

    private func drop(_ error: SMPTransportError) {
        link?.end(error)
        link = nil
        resetReassembly()
    }

    private func resetReassembly() {
        decoder.reset()
        if let held = reassembling ?? nil {
            Task { [device] in await device.releaseBuffer(held) }
        }
        reassembling = nil
    }

    // MARK: - The device

    private func process(_ frame: [UInt8], buffer: SimulatedDevice.ReceiveBuffer?, arrival: Double, link id: Int) async
    {
        guard let buffer else {
            framesLostForBuffers += 1
            return
        }
        await device.receive(frame, in: buffer) { delivery in
            await self.deliver(delivery, arrival: arrival, link: id)
        }
    }

    /// Schedules the device's answers as notifications, in modelled time.
    private func deliver(_ delivery: LinkDelivery, arrival: Double, link id: Int) {
        let start = max(arrival, deviceFree)
        let done = start + profile.requestProcessingMilliseconds / 1000
        deviceFree = done
        var last = done
        for scheduled in delivery.responses {
            let delay = scheduled.delay.seconds
            var values = BLEFragmentation.fragments(of: scheduled.frame, maximumWriteLength: profile.maximumWriteLength)
                .map(Array.init)
            if values.count > 1 {
                multiNotificationResponses += 1
                let fault = LinkFault.truncateResponse(afterResponses: multiNotificationResponses)
                if let index = faults.firstIndex(of: fault) {
                    faults.remove(at: index)
                    values = Array(values.prefix(1))
                }
            }
            var end = done + delay
            for value in values { end = model.notify(length: value.count, at: done + delay) }
            last = max(last, end)
            enqueue(Pending(time: end, values: values, link: id, disconnect: false))
        }
        if delivery.disconnect || (delivery.deviceResets && delivery.responses.isEmpty) {
            // A link fault, or power lost: the link ends now.
            enqueue(Pending(time: last, values: [], link: id, disconnect: true))
        } else if delivery.deviceResets {
            // The device reboots its reset delay after answering, in real time: whatever link is
            // up then ends with it (a central that reconnected meanwhile loses that one).
            let delay = device.configuration.resetDelay
            Task { [weak self] in
                try? await Task.sleep(for: delay)
                await self?.deviceRebooted()
            }
        }
        if !releasing {
            releasing = true
            Task { await self.release() }
        }
    }

    /// The device rebooted: the link drops, as a peripheral's does when it resets.
    private func deviceRebooted() {
        now += device.configuration.resetDelay.seconds
        drop(SMPTransportError(.disconnected, "the device reset"))
    }

    private func enqueue(_ item: Pending) {
        let index = pending.lastIndex { $0.time <= item.time }.map { $0 + 1 } ?? 0
        pending.insert(item, at: index)
    }

    /// Hands responses over one at a time, in modelled order, each after ``settle``.
    private func release() async {
        while !pending.isEmpty {
            try? await Task.sleep(for: settle)
            guard !pending.isEmpty else { break }
            let item = pending.removeFirst()
            guard item.link == linkID, let link else { continue }
            now = max(now, item.time)
            for value in item.values {
                notificationCount += 1
                link.deliver(value)
            }
            if item.disconnect { drop(SMPTransportError(.disconnected, "the device reset")) }
        }
        releasing = false
    }
}

/// One connection to a ``SimulatedBLEPeripheral``.
public final class SimulatedBLELink: GATTLink {
    public let maximumWriteLength: Int
    public let events: AsyncStream<GATTLinkEvent>
    private let continuation: AsyncStream<GATTLinkEvent>.Continuation
    /// Weak: the peripheral keeps its current link, and a link must not keep a peripheral alive
    /// (a link whose peripheral is gone is disconnected).
    private weak let peripheral: SimulatedBLEPeripheral?
    private let id: Int

    init(peripheral: SimulatedBLEPeripheral, id: Int, maximumWriteLength: Int) {
        self.peripheral = peripheral
        self.id = id
        self.maximumWriteLength = maximumWriteLength
        (events, continuation) = AsyncStream.makeStream(of: GATTLinkEvent.self)
    }

    public func writeWithoutResponse(_ value: [UInt8]) async throws -> Bool {
        try await connected().write(value, link: id)
    }

    public func waitUntilReadyForWrite() async throws {
        try await connected().waitUntilReady(link: id)
    }

    public func disconnect() async {
        await peripheral?.disconnect(link: id)
    }

    private func connected() throws -> SimulatedBLEPeripheral {
        guard let peripheral else { throw SMPTransportError(.disconnected, "the peripheral is gone") }
        return peripheral
    }

    func deliver(_ value: [UInt8]) {
        continuation.yield(.notification(value))
    }

    func end(_ error: SMPTransportError?) {
        continuation.yield(.disconnected(error))
        continuation.finish()
    }
}

extension Duration {
    /// The duration in seconds.
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
