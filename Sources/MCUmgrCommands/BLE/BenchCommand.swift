import ArgumentParser
import Foundation
import SMPBLETransport
import SMPSimulator

/// `mcumgr bench …`: modelled transfer throughput.
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Modelled transfer throughput over simulated links.",
        subcommands: [BLE.self]
    )

    /// `mcumgr bench ble --profile NAME [--window N] [--size BYTES]`.
    struct BLE: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "ble",
            abstract: "Upload an image over a simulated Bluetooth LE link and report the modelled throughput.",
            discussion: """
                Runs the real client and GATT transport over a modelled radio (PHY, data length, \
                ATT MTU, connection interval, packets per event) to a simulated device, on a \
                virtual clock: the rates are the model's, not this machine's. Without --window it \
                runs every window from 1 to the device's buffer count and reports window 1 and \
                the best. Profiles: legacy, fast, reassembly, coded.
                """
        )

        @OptionGroup var global: LocalOptions

        @Option(help: "The link profile: legacy, fast, reassembly or coded.")
        var profile: String = "reassembly"

        @Option(
            parsing: .unconditional,
            help: "Requests in flight (default: every window from 1 to the device's buffer count)."
        )
        var window: Int?

        @Option(parsing: .unconditional, help: "Image size in bytes.")
        var size: Int = 131_072

        func validate() throws {
            try global.refuseClientOptions(command: "bench ble", reason: "it models the link and the device")
            guard BLELinkProfile.named(profile) != nil else {
                let names = BLELinkProfile.all.map(\.name).joined(separator: ", ")
                throw ValidationError("unknown profile '\(profile)'; use one of \(names)")
            }
            if let window, window < 1 { throw ValidationError("--window must be at least 1") }
            guard size >= 1024 else { throw ValidationError("--size must be at least 1024 bytes") }
        }

        func run() async throws {
            guard let link = BLELinkProfile.named(profile) else { return }
            var results: [BLEBenchmark.Result] = []
            if let window {
                results.append(try await BLEBenchmark.run(profile: link, window: window, size: size))
            } else {
                for window in 1...link.deviceBufferCount {
                    results.append(try await BLEBenchmark.run(profile: link, window: window, size: size))
                }
            }
            let best = results.max { $0.bytesPerSecond < $1.bytesPerSecond }
            if global.json {
                CommandSupport.emit(Self.json(link, results: results, best: best))
            } else {
                for line in Self.text(link, results: results, best: best) { Console.out(line) }
            }
        }

        /// The link, its capacities and every window's result as one JSON object.
        /// - Parameters:
        ///   - link: the profile the results were modelled on.
        ///   - results: one result per window run.
        ///   - best: the fastest of them (`nil` only when there are none).
        private static func json(
            _ link: BLELinkProfile,
            results: [BLEBenchmark.Result],
            best: BLEBenchmark.Result?
        ) -> JSONValue {
            .object([
                ("profile", .string(link.name)),
                ("phy", .string(link.phy.rawValue)),
                ("att_mtu", .int(Int64(link.attMTU))),
                ("data_length", .int(Int64(link.dataLength))),
                ("connection_interval_ms", .double(link.connectionIntervalMilliseconds)),
                ("packets_per_event", .int(Int64(link.centralSlotsPerEvent))),
                ("reassembly", .bool(link.deviceReassembly)),
                ("buf_size", .int(Int64(link.deviceBufferSize))),
                ("buf_count", .int(Int64(link.deviceBufferCount))),
                ("capacity_bytes_per_second", .double(link.theoreticalWriteCapacity.rounded())),
                ("link_layer_bytes_per_second", .double(link.linkLayerCapacity.rounded())),
                (
                    "results",
                    .array(
                        results.map { result in
                            .object([
                                ("window", .int(Int64(result.window))),
                                ("bytes", .int(Int64(result.bytes))),
                                ("frame_size", .int(Int64(result.frameSize))),
                                ("seconds", .double(result.seconds)),
                                ("bytes_per_second", .double(result.bytesPerSecond.rounded())),
                                ("fraction_of_capacity", .double(result.fractionOfCapacity)),
                            ])
                        }
                    )
                ),
                ("best_window", best.map { .int(Int64($0.window)) } ?? .null),
            ])
        }

        /// The link, its capacities and one line per window, the best marked when there are several.
        /// - Parameters:
        ///   - link: the profile the results were modelled on.
        ///   - results: one result per window run.
        ///   - best: the fastest of them.
        private static func text(
            _ link: BLELinkProfile,
            results: [BLEBenchmark.Result],
            best: BLEBenchmark.Result?
        ) -> [String] {
            var lines = [
                link.description,
                "link capacity: \(Self.rate(link.theoreticalWriteCapacity)) of ATT writes (\(link.centralSlotsPerEvent) packets per event), \(Self.rate(link.linkLayerCapacity)) of LL payload",
            ]
            for result in results {
                let marker = results.count > 1 && result.window == best?.window ? " (best)" : ""
                let percent = Int((result.fractionOfCapacity * 100).rounded())
                lines.append(
                    "window \(result.window)\(marker): \(Self.rate(result.bytesPerSecond)), \(percent)% of capacity; \(result.bytes) bytes in \(String(format: "%.2f", result.seconds)) s modelled, \(result.frameSize)-byte frames"
                )
            }
            return lines
        }

        static func rate(_ bytesPerSecond: Double) -> String {
            String(format: "%.1f kB/s", bytesPerSecond / 1000)
        }
    }
}
