import Foundation
import MCUboot
import MCUmgr
import MCUmgrDFU
import SMPBLETransport
import SMPSimulator

/// Modelled DFU throughput over a `BLELinkProfile`: a real image upload through the real
/// client and transport core, timed on the simulated link's virtual clock.
public enum BLEBenchmark {
    /// One measurement.
    public struct Result: Sendable, Hashable {
        /// The profile.
        public var profile: BLELinkProfile
        /// The window asked for (the client clamps it to the device's `buf_count`).
        public var window: Int
        /// Image bytes uploaded.
        public var bytes: Int
        /// Modelled seconds from the first chunk to the last answer.
        public var seconds: Double
        /// SMP frames the client sized its chunks to.
        public var frameSize: Int

        /// Modelled image bytes per second.
        public var bytesPerSecond: Double { seconds > 0 ? Double(bytes) / seconds : 0 }
        /// Throughput as a fraction of the link's theoretical write capacity.
        public var fractionOfCapacity: Double { bytesPerSecond / profile.theoreticalWriteCapacity }
    }

    /// Uploads a valid MCUboot image of `size` bytes over a fresh simulated peripheral.
    /// - Parameters:
    ///   - profile: the link.
    ///   - window: requests in flight.
    ///   - size: image size in bytes.
    /// - Returns: the measurement.
    /// - Throws: what the upload throws.
    public static func run(profile: BLELinkProfile, window: Int, size: Int) async throws -> Result {
        let peripheral = SimulatedBLEPeripheral(profile: profile)
        let client = try await SMPClient.connect(
            GATTTransport.simulated(peripheral),
            configuration: .init(timeout: .seconds(5), retries: 2)
        )
        let image = try syntheticImage(size: size)
        let started = await peripheral.modelledTime
        do {
            try await client.uploadAndWait(
                ImageUpload(data: image),
                options: .init(window: window, openingChunkLimit: nil)
            )
        } catch {
            await client.close()
            throw error
        }
        let finished = await peripheral.modelledTime
        await client.close()
        return Result(
            profile: profile,
            window: window,
            bytes: image.count,
            seconds: finished - started,
            frameSize: await client.maximumFrameSize
        )
    }

    /// Runs every window from 1 to the device's buffer count and returns window 1 and the best.
    public static func windowOneAndBest(profile: BLELinkProfile, size: Int) async throws -> (Result, Result) {
        var results: [Result] = []
        for window in 1...max(1, profile.deviceBufferCount) {
            results.append(try await run(profile: profile, window: window, size: size))
        }
        let best = results.max { $0.bytesPerSecond < $1.bytesPerSecond } ?? results[0]
        return (results[0], best)
    }

    /// A valid MCUboot image (header, payload, SHA-256 TLV) of about `size` bytes, built like the
    /// simulator's factory image.
    public static func syntheticImage(size: Int, version: (UInt8, UInt8) = (2, 0)) throws -> Data {
        let bytes = FactoryImage.make(
            version: ImageVersion(major: version.0, minor: version.1, revision: 0),
            payloadSize: max(64, size - 0x200 - 40)
        )
        _ = try MCUbootImage(bytes: bytes)
        return Data(bytes)
    }
}
