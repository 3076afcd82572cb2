import ArgumentParser
import Foundation
import MCUboot
import MCUmgr
import SMPBytes
import SMPCore

/// `mcumgr suit list|state|upload|process|missing|cleanup`: SUIT firmware update (group 66,
/// nRF Connect SDK).
struct SUITCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "suit",
        abstract: "SUIT (nRF Connect SDK): list, state, upload, process, missing, cleanup.",
        subcommands: [List.self, State.self, Upload.self, Process.self, Missing.self, Cleanup.self]
    )

    /// Manifest role names (nRF Connect SDK `suit_manifest_role_t`).
    static let roleNames: [UInt32: String] = [
        0x10: "SEC_TOP", 0x11: "SEC_SDFW", 0x12: "SEC_SYSCTRL", 0x20: "APP_ROOT", 0x21: "APP_RECOVERY",
        0x22: "APP_LOCAL_1", 0x23: "APP_LOCAL_2", 0x24: "APP_LOCAL_3", 0x30: "RAD_RECOVERY", 0x31: "RAD_LOCAL_1",
        0x32: "RAD_LOCAL_2",
    ]

    static func roleText(_ role: UInt32) -> String {
        let hex = "0x" + String(role, radix: 16)
        return roleNames[role].map { "\(hex) \($0)" } ?? hex
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the manifest roles the device supports.")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let response = try await CommandContext.withClient(global) {
                try await $0.send(SUITManagement.ManifestList())
            }
            if global.json {
                try CommandSupport.emit(response: response)
            } else if response.manifests.isEmpty {
                Console.out("no manifests")
            } else {
                for manifest in response.manifests { Console.out("role " + SUITCommand.roleText(manifest.role)) }
            }
        }
    }

    struct State: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show one manifest role's class, policies and installed manifest."
        )
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The role, from 'mcumgr suit list' (e.g. 0x20 or 32).") var role: String

        func run() async throws {
            guard let value = CommandSupport.unsigned(role), let roleID = UInt32(exactly: value) else {
                throw ValidationError("role '\(role)' is not a number; e.g. 0x20")
            }
            let request = SUITManagement.ManifestState(role: roleID)
            let state = try await CommandContext.withClient(global) { try await $0.send(request) }
            // The role asked, then the state, keys = wire names; the text shows the same fields.
            let json = try JSONValue(encoding: request).merging(try JSONValue(encoding: state))
            if global.json {
                CommandSupport.emit(json)
                return
            }
            Console.out("role " + SUITCommand.roleText(roleID))
            guard case .object(let members) = json else { return }
            var rows: [[String]] = []
            for (key, value) in members where key != "role" {
                switch (key, value) {
                case ("digest_algorithm", _):
                    // The key is there only when the device sent the algorithm.
                    if let id = state.digestAlgorithm.map(Int64.init) {
                        rows.append([key, "\(id) (\(SUITEnvelope.algorithmName(id)))"])
                    }
                case ("semantic_version", .array(let parts)):
                    rows.append([key, parts.map { $0.rendered() }.joined(separator: ".")])
                case (_, .string(let text)): rows.append([key, text])
                default: rows.append([key, value.rendered()])
                }
            }
            for line in CommandSupport.table([], rows) { Console.out("  " + line) }
        }
    }

    struct Upload: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Upload a SUIT envelope (.suit) or SUIT package (.zip) and let the device install it.",
            discussion: """
                Cache images of a package are uploaded after the envelope (which is then uploaded \
                with defer_install) and processing starts once they are on the device. While the \
                device processes the envelope it may ask for images it does not carry; they are \
                served from the package until the device has asked for nothing for --wait seconds. \
                With --defer the envelope is only stored: start it with 'mcumgr suit process'.
                """
        )
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The SUIT envelope or SUIT zip.") var file: String
        @Flag(name: .customLong("defer"), help: "Store the envelope; do not process it yet.") var deferInstall = false
        @Option(parsing: .unconditional, help: "Seconds to keep polling for images the device asks for (0 = ask once).")
        var wait: Double = 5
        @Option(parsing: .unconditional, help: CommandSupport.windowHelp) var window: Int?

        func validate() throws {
            try CommandSupport.checkWindow(window)
            guard (0...600).contains(wait) else { throw ValidationError("--wait must be from 0 to 600 seconds") }
        }

        func run() async throws {
            let package = try loadPackage(file)
            let name = (file as NSString).lastPathComponent
            guard let envelope = package.images.first(where: { $0.content == .suitEnvelope }) else {
                throw CommandFailure(
                    "\(name) holds no SUIT envelope (\(package.format)); use 'mcumgr image upload' for MCUboot images"
                )
            }
            let caches = package.images.filter { $0.content == .suitCache }
            let clock = ContinuousClock()
            let began = clock.now
            announce(envelope, caches: caches.count)
            let served = try await CommandContext.withClient(global) { client in
                try await install(package, name: name, envelope: envelope, caches: caches, client: client)
            }
            report(envelope, served: served, elapsed: clock.now - began)
        }

        /// The `start` event, or two lines for people, before anything is sent.
        private func announce(_ envelope: FirmwarePackage.Image, caches: Int) {
            if global.json {
                CommandSupport.emit(
                    .object([
                        ("event", .string("start")), ("file", .string(envelope.fileName)),
                        ("digest", .string(Hex.encode(envelope.hash))), ("len", .int(Int64(envelope.data.count))),
                        ("caches", .int(Int64(caches))),
                    ])
                )
            } else {
                let sequence = envelope.suit?.sequenceNumber.map { ", sequence \($0)" } ?? ""
                Console.out("uploading \(envelope.fileName): SUIT envelope, \(envelope.data.count) bytes\(sequence)")
                Console.out("digest \(Hex.encode(envelope.hash))")
            }
        }

        /// Uploads the envelope and the caches, starts processing (unless `--defer`) and serves
        /// the images the device then asks for.
        /// - Returns: the names of the images served.
        private func install(
            _ package: FirmwarePackage,
            name: String,
            envelope: FirmwarePackage.Image,
            caches: [FirmwarePackage.Image],
            client: SMPClient
        ) async throws -> [String] {
            let options = TransferOptions(window: window)
            let json = global.json
            // With caches the envelope waits for them: processing it first would find them missing.
            let deferred = deferInstall || !caches.isEmpty
            try await Self.transfer(
                SUITEnvelopeUpload(data: envelope.data, deferInstall: deferred),
                label: "envelope",
                client: client,
                options: options,
                json: json
            )
            for cache in caches {
                if !json { Console.out("uploading cache \(cache.fileName) to partition \(cache.imageIndex)") }
                try await Self.transfer(
                    SUITCacheUpload(data: cache.data, targetID: UInt32(cache.imageIndex)),
                    label: "cache \(cache.imageIndex)",
                    client: client,
                    options: options,
                    json: json
                )
            }
            if deferInstall { return [] }
            if deferred { _ = try await client.send(SUITManagement.EnvelopeUpload.processDeferredEnvelope) }
            return try await Self.serveMissingImages(
                package: package,
                name: name,
                client: client,
                wait: .milliseconds(Int(wait * 1000)),
                options: options,
                json: json
            )
        }

        /// The `done` event, or one line saying what the device does next.
        private func report(_ envelope: FirmwarePackage.Image, served: [String], elapsed: Duration) {
            if global.json {
                CommandSupport.emit(
                    .object([
                        ("event", .string("done")), ("digest", .string(Hex.encode(envelope.hash))),
                        ("deferred", .bool(deferInstall)), ("served", .array(served.map { .string($0) })),
                        ("seconds", TransferProgressView.jsonSeconds(elapsed)),
                    ])
                )
            } else if deferInstall {
                Console.out("stored the envelope; start processing with 'mcumgr suit process'")
            } else {
                Console.out(
                    "uploaded in \(String(format: "%.1f", TransferProgressView.seconds(elapsed))) s; "
                        + "the device is processing the envelope (see 'mcumgr suit state 0x20')"
                )
            }
        }

        /// One chunked transfer with its progress view.
        static func transfer<U: ChunkedUpload>(
            _ upload: U,
            label: String,
            client: SMPClient,
            options: TransferOptions,
            json: Bool
        ) async throws {
            var view = TransferProgressView(label: label, json: json)
            do {
                for try await event in client.upload(upload, options: options) { view.update(event) }
                try Task.checkCancellation()
            } catch {
                // SUIT chunks carry no hash by which a device could resume: it starts over.
                throw view.ending(error, resumes: false)
            }
            view.finish()
        }

        /// Polls the missing-image state (every 150 ms, as Nordic's clients do) and uploads each
        /// image the device asks for, until it asked for nothing during `wait`. A resource the
        /// device refuses with `EBADSTATE` mid-transfer is one it no longer waits for — typically
        /// the last chunk sent again after its answer was lost, once the device had every byte and
        /// went on: the next poll says what it wants now (at most three times in a row).
        /// - Returns: the resources served.
        static func serveMissingImages(
            package: FirmwarePackage,
            name: String,
            client: SMPClient,
            wait: Duration,
            options: TransferOptions,
            json: Bool
        ) async throws -> [String] {
            let clock = ContinuousClock()
            var quietSince = clock.now
            var served: [String] = []
            var refusedInARow = 0
            while true {
                let state: SUITManagement.MissingImageState.Response
                do {
                    state = try await client.send(SUITManagement.MissingImageState())
                } catch let error as SMPDeviceError where error.returnCode == .notSupported {
                    return served  // an older SDK without image fetching
                }
                if let session = state.streamSessionID, let resourceID = state.resourceID {
                    let uri = state.resourceURI ?? Hex.encode(resourceID)
                    guard let resource = package.resource(named: uri) else {
                        throw CommandFailure("the device asks for \(uri), which \(name) does not carry")
                    }
                    if !json { Console.out("the device asks for \(uri): uploading \(resource.data.count) bytes") }
                    quietSince = clock.now
                    do {
                        try await transfer(
                            SUITResourceUpload(data: resource.data, streamSessionID: session),
                            label: resource.name,
                            client: client,
                            options: options,
                            json: json
                        )
                    } catch let refusal as SMPDeviceError where refusal.returnCode == .badState && refusedInARow < 3 {
                        refusedInARow += 1
                        if !json {
                            Console.out("the device no longer waits for \(uri) (\(refusal)); asking what it needs")
                        }
                        continue
                    }
                    refusedInARow = 0
                    served.append(uri)
                    quietSince = clock.now
                    continue
                }
                if clock.now - quietSince >= wait { return served }
                try await Task.sleep(for: .milliseconds(150))
            }
        }
    }

    struct Process: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Start processing an envelope uploaded with --defer."
        )
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            _ = try await CommandContext.withClient(global) {
                try await $0.send(SUITManagement.EnvelopeUpload.processDeferredEnvelope)
            }
            if global.json {
                CommandSupport.emit(.object([]))
            } else {
                Console.out("the device is processing the envelope")
            }
        }
    }

    struct Missing: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the image the device is waiting for while it processes an envelope, if any."
        )
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let state = try await CommandContext.withClient(global) {
                try await $0.send(SUITManagement.MissingImageState())
            }
            if global.json {
                // The state as sent, and hand-shaped `resource`: the URI as text, which the wire
                // carries as bytes (`resource_id`, shown in hex).
                let uri: JSONValue = .object(state.resourceURI.map { [("resource", .string($0))] } ?? [])
                CommandSupport.emit(try JSONValue(encoding: state).merging(uri))
            } else if let session = state.streamSessionID {
                let uri = state.resourceURI ?? state.resourceID.map { Hex.encode($0) } ?? "?"
                Console.out("the device asks for \(uri) (stream session \(session))")
            } else {
                Console.out("the device is not waiting for an image")
            }
        }
    }

    struct Cleanup: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Erase the DFU partition and the DFU caches.")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            _ = try await CommandContext.withClient(global) { try await $0.send(SUITManagement.Cleanup()) }
            if global.json {
                CommandSupport.emit(.object([]))
            } else {
                Console.out("erased the DFU partition and caches")
            }
        }
    }
}
