import Foundation
import MCUboot
import MCUmgr
import MCUmgrDFU
import SMPBytes
import SMPCore
import SMPSimulator
import Testing

/// Uploads of a 256 KiB image (about 130 chunks) through the real client and transfer engine into
/// the simulated device, under every kind of link fault; the device's slot must end up holding
/// the file.
@Suite(.serialized)
struct UploadUnderFaultsTests {
    static let size = 1 << 18

    /// A 256 KiB MCUboot image (header, a patterned payload, a SHA-256 TLV) that the device lists
    /// once it is uploaded, so a finished upload whose last answer is lost is recognised. Only
    /// uploaded, never booted.
    static let file: Data = Data(
        FactoryImage.make(version: ImageVersion(major: 2, minor: 0, revision: 0), payloadSize: size - 0x200 - 40)
    )

    /// The image's hash TLV, as the device lists it.
    static let hash: [UInt8] = (try? MCUbootImage(bytes: Array(file)))?.hash ?? []

    /// The upload of ``file``.
    static var upload: ImageUpload { ImageUpload(data: file, imageHash: hash) }

    static func device(faults: [Fault], seed: UInt64 = 7) async -> SimulatedDevice {
        var configuration = SimulatedDevice.Configuration(slotSize: 0x20_0000, seed: seed)
        configuration.bufferSize = 2048
        let device = SimulatedDevice(configuration: configuration)
        await device.setFaults(Faults(faults, seed: seed))
        return device
    }

    /// A client with a short request timeout, so that lost answers cost little, and many retries,
    /// so that the device may stay silent for the timeout × 101 (8 s) before the upload gives up:
    /// a loaded machine held the simulated device's task back for 1.7 s (21 timeouts of 0.1 s)
    /// while other builds ran; nothing here tests giving up.
    static func client(
        _ device: SimulatedDevice,
        counter: DataCounter? = nil,
        timeout: Duration = .milliseconds(80)
    ) async throws -> SMPClient {
        let loopback = LoopbackTransport(device: device)
        return try await SMPClient.connect(
            counter.map { CountingTransport(inner: loopback, counter: $0) } ?? loopback,
            configuration: .init(
                timeout: timeout,
                retries: 100,
                busyBackoff: .milliseconds(2),
                firstSequence: 0
            )
        )
    }

    static func secondarySlot(_ device: SimulatedDevice) async -> [UInt8] {
        await device.bootloader.slots[0][1].data
    }

    static let faultTable: [[Fault]] = [
        [],
        [.dropResponsesRandomly(probability: 0.05)],
        [.dropResponsesRandomly(probability: 0.20)],
        [.dropRequests(every: 9)],
        [.duplicateResponses(every: 3)],
        [.reorderResponses(every: 4)],
        [.delayResponses(by: .milliseconds(150), every: 25)],
        [.busy(count: 6)],
        [.dropResponsesRandomly(probability: 0.1), .duplicateResponses(every: 5), .reorderResponses(every: 7)],
    ]

    @Test(arguments: faultTable, [1, 4])
    func uploadCompletesAndTheSlotEqualsTheFile(_ faults: [Fault], _ window: Int) async throws {
        let device = await Self.device(faults: faults)
        let client = try await Self.client(device)
        let progress = try await client.uploadAndWait(Self.upload, options: .init(window: window))
        #expect(progress.bytesConfirmed == Self.size)
        let slot = await Self.secondarySlot(device)
        #expect(slot.count >= Self.size)
        #expect(Data(slot.prefix(Self.size)) == Self.file)
        await client.close()
    }

    /// The window is 1, or the device's (`buf_count − 1` = 3): a forced window beyond the
    /// device's buffers re-sends for back-pressure too, which is not what this measures.
    @Test(arguments: [1, nil])
    func aDisconnectMidUploadResumesAndResendsAtMostOneWindow(_ window: Int?) async throws {
        let device = await Self.device(faults: [.disconnect(afterRequests: 60)])
        let counter = DataCounter()
        // Nothing is lost here but the link: a timeout long enough that a slow machine adds no
        // retries, whose re-sends would be counted as the disconnect's.
        let timeout = Duration.seconds(5)
        let first = try await Self.client(device, counter: counter, timeout: timeout)
        await #expect(throws: SMPTransportError(.disconnected)) {
            try await first.uploadAndWait(Self.upload, options: .init(window: window))
        }
        await device.setFaults(.none)
        let second = try await Self.client(device, counter: counter, timeout: timeout)
        // The frame size follows the device's buf_size, read once per connection.
        try await second.loadParameters()
        let frame = await second.maximumFrameSize
        try await second.uploadAndWait(Self.upload, options: .init(window: window))
        // Every data byte that crossed the link, both attempts, minus the file: what was sent twice.
        let resent = counter.total - Self.size
        let inFlight = window ?? 3
        print("window \(inFlight): \(resent) data bytes sent twice around the disconnect (frames of \(frame) bytes)")
        // At most the chunks in flight when the link dropped, plus the resumed session's opening
        // chunk (512 bytes the device discards when it resumes).
        #expect(resent <= inFlight * frame + 512)
        #expect(Data((await Self.secondarySlot(device)).prefix(Self.size)) == Self.file)
        await second.close()
    }

    /// A cancelled upload is an error, not a finished upload: the event stream of a cancelled
    /// consumer just ends, which `uploadAndWait` must not take for completion.
    @Test func aCancelledUploadThrowsCancellation() async throws {
        let device = await Self.device(faults: [])
        let client = try await Self.client(device)
        let task = Task { try await client.uploadAndWait(Self.upload, options: .init(window: 1)) }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        await client.close()
    }

    @Test func aDeviceThatLosesItsSessionGetsTheFileFromTheStart() async throws {
        let device = await Self.device(faults: [.powerLoss(.duringUpload(atOffset: 100_000))])
        let client = try await Self.client(device)
        do {
            try await client.uploadAndWait(Self.upload, options: .init(window: 4))
        } catch {
            // A power loss drops the link: reconnect and upload again, as a user would.
            let again = try await Self.client(device)
            try await again.uploadAndWait(Self.upload, options: .init(window: 4))
        }
        #expect(Data((await Self.secondarySlot(device)).prefix(Self.size)) == Self.file)
    }

    /// The device hashes the finished upload (`CONFIG_IMG_ENABLE_IMAGE_CHECK`) and answers
    /// `match: false` when it differs from the SHA-256 sent with the first chunk: every offset
    /// was confirmed, yet the upload fails. Here the declared hash is wrong, which the device
    /// cannot tell from data corrupted on the way. Without the check the device has no verdict.
    @Test(arguments: [1, 4])
    func aFailedDeviceHashCheckFailsTheUpload(window: Int) async throws {
        let wrong = ImageUpload(data: Self.file, sha256: Data(repeating: 0xa5, count: 32))
        let device = await Self.device(faults: [])
        let client = try await Self.client(device)
        await #expect(throws: SMPTransferError(.deviceHashMismatch)) {
            try await client.uploadAndWait(wrong, options: .init(window: window))
        }
        // The right hash passes the same check.
        try await client.uploadAndWait(Self.upload, options: .init(window: window))

        var configuration = SimulatedDevice.Configuration(slotSize: 0x20_0000)
        configuration.imageCheck = false
        let unchecked = try await Self.client(SimulatedDevice(configuration: configuration))
        let progress = try await unchecked.uploadAndWait(wrong, options: .init(window: window))
        #expect(progress.bytesConfirmed == Self.size)
    }
}

/// Counts the `data` bytes of every image-upload request that crosses the link.
final class DataCounter: Sendable {
    private let bytes = Locked(0)
    func add(_ count: Int) { bytes.withLock { $0 += count } }
    var total: Int { bytes.withLock { $0 } }
}

/// A transport that passes everything through and counts upload data bytes on the way.
struct CountingTransport: SMPTransport {
    let inner: any SMPTransport
    let counter: DataCounter
    var endpointDescription: String { inner.endpointDescription }

    func connect() async throws -> any SMPConnection {
        CountingConnection(inner: try await inner.connect(), counter: counter)
    }
}

final class CountingConnection: SMPConnection {
    let inner: any SMPConnection
    let counter: DataCounter
    init(inner: any SMPConnection, counter: DataCounter) {
        self.inner = inner
        self.counter = counter
    }
    var maximumFrameSize: Int { inner.maximumFrameSize }
    var frames: AsyncThrowingStream<[UInt8], any Error> { inner.frames }
    func send(_ frame: [UInt8]) async throws {
        // Counted once the link took it: a send refused by a closed link never reached the device.
        try await inner.send(frame)
        if let parsed = try? SMPFrame(parsing: frame), parsed.header.group == .image, parsed.header.command == 1,
            let upload = try? parsed.decodeRequest(as: ImageManagement.Upload.self)
        {
            counter.add(upload.data.count)
        }
    }
    func close() async { await inner.close() }
}
