import ArgumentParser
import Foundation
import MCUboot
import MCUmgr
import MCUmgrDFU
import SMPBytes
import SMPCore

/// `mcumgr image list|upload|test|confirm|erase|slots`: the image-management group (1) on a
/// device (`image info` on a local file is ``ImageInfoCommand``).
enum ImageCommands {
    // MARK: - Shared rendering

    /// The image list as a table (Go mcumgr's fields, one row per slot).
    /// - Parameters:
    ///   - response: the device's image list.
    ///   - shortHashes: show each hash as its first 8 hex digits and "…" (enough to tell slots
    ///     apart and to give to `image test`, which takes a unique prefix).
    static func text(_ response: ImageManagement.StateRead.Response, shortHashes: Bool = false) -> [String] {
        guard !response.images.isEmpty else { return ["no images"] }
        let rows = response.images.map { state -> [String] in
            [
                "\(state.imageNumber)", "\(state.slot)", state.version, state.flagNames.joined(separator: " "),
                state.hash.map { shortHashes ? shortHash($0) : Hex.encode($0) } ?? "unavailable",
            ]
        }
        var lines = CommandSupport.table(["image", "slot", "version", "flags", "hash"], rows, rightAligned: [0, 1])
        if let split = response.splitStatus, split != 0 { lines.append("split status: \(split)") }
        return lines
    }

    /// A hash shortened for people: its first 8 hex digits and "…".
    static func shortHash(_ hash: Data) -> String {
        let full = Hex.encode(hash)
        return full.count > 8 ? String(full.prefix(8)) + "…" : full
    }

    /// The image list from its type, keys = wire names. The image number, the hash and every flag
    /// are written out, absent ones as 0, null and false: a single-image device leaves the number
    /// out, a frugal one its false flags, serial recovery without its hash option the hash, and
    /// scripts get the same keys from every device.
    static func json(_ response: ImageManagement.StateRead.Response) throws -> JSONValue {
        let complete = ImageManagement.StateRead.Response(
            images: response.images.map { state in
                var complete = state.withEveryFlag
                complete.image = state.imageNumber
                return complete
            },
            splitStatus: response.splitStatus
        )
        // Hand-shaped in one key: `splitStatus` is the one wire name not in snake_case.
        let encoded = try JSONValue(encoding: complete).renamingKeys(["splitStatus": "split_status"])
        guard case .object(var members) = encoded, let index = members.firstIndex(where: { $0.0 == "images" }),
            case .array(let images) = members[index].1
        else { return encoded }
        members[index].1 = .array(
            images.map { image in
                guard case .object(var keys) = image, !keys.contains(where: { $0.0 == "hash" }) else { return image }
                let afterVersion = keys.firstIndex { $0.0 == "version" }.map { $0 + 1 } ?? keys.count
                keys.insert(("hash", .null), at: afterVersion)
                return .object(keys)
            }
        )
        return .object(members)
    }

    static func show(_ response: ImageManagement.StateRead.Response, json: Bool, shortHashes: Bool = false) throws {
        if json {
            CommandSupport.emit(try Self.json(response))
        } else {
            for line in text(response, shortHashes: shortHashes) { Console.out(line) }
        }
    }

    /// A full hash, or a prefix resolved against the device's image list (at least 4 hex digits,
    /// matching exactly one slot): `ImageStateGuard`'s rule, its refusals as the command's errors.
    static func resolveHash(_ text: String, client: SMPClient) async throws -> Data {
        let bytes = try CommandSupport.hex(text, what: "hash")
        do {
            return try await ImageStateGuard.resolveHash(bytes, client: client)
        } catch let refusal as ImageStateGuard.Refusal {
            if refusal.kind == .badInput { throw ValidationError(refusal.description) }
            throw CommandFailure(refusal.description)
        }
    }

    // MARK: - list

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the images on the device: image, slot, version, flags and hash."
        )
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Shorten hashes to their first 8 hex digits (JSON keeps them whole).") var short = false

        func run() async throws {
            let response = try await CommandContext.withClient(global) {
                try await $0.send(ImageManagement.StateRead())
            }
            try ImageCommands.show(response, json: global.json, shortHashes: short)
        }
    }

    // MARK: - upload

    struct Upload: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Upload an MCUboot image to the device's secondary slot.",
            discussion: """
                The file is parsed first: a bare image, or a firmware zip from which one image is \
                taken (the only one, or the one --image names). After the upload, mark it with \
                'mcumgr image test HASH' (or confirm it) and reset; 'mcumgr upgrade' does all of it.
                """
        )
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The image (.bin) or firmware package (.zip).") var file: String
        @Option(
            parsing: .unconditional,
            help: "The image number to upload to (0 = application; default: the package's, else 0)."
        )
        var image: Int?
        @Flag(help: "Ask the device to refuse the image unless it is newer than the running one.") var upgrade = false
        @Option(parsing: .unconditional, help: CommandSupport.windowHelp) var window: Int?
        @Option(parsing: .unconditional, help: CommandSupport.alignmentHelp)
        var alignment: Int = 1

        func validate() throws {
            try CommandSupport.checkWindow(window)
            try CommandSupport.checkAlignment(alignment)
            if let image, image < 0 || image > 255 { throw ValidationError("--image must be from 0 to 255") }
        }

        /// Checks the image against the slot sizes the device reports (image 6; a device without
        /// them is not checked): too large is refused with both sizes (status 65), too close to
        /// the end of the slot for MCUboot's trailer is a warning.
        func checkFit(_ chosen: FirmwarePackage.Image, image: Int, client: SMPClient) async throws -> String? {
            let capacity: ImageManagement.SlotInfo.Image?
            do {
                capacity = try await client.send(ImageManagement.SlotInfo()).images.first { Int($0.image) == image }
            } catch is SMPDeviceError {
                return nil
            }
            // The upload goes to the image's second slot where it has one (swap, overwrite).
            let slot = capacity?.slots.contains { $0.slot == 1 } == true ? 1 : 0
            do {
                return try MCUbootPlanner.checkFit(
                    chosen,
                    imageIndex: image,
                    slot: slot,
                    capacity: capacity,
                    strategy: .swap
                )
            } catch {
                throw InputFileError(.badData, error.message)
            }
        }

        /// The image of the package to upload.
        func selectImage(_ package: FirmwarePackage) throws -> FirmwarePackage.Image {
            let candidates = package.images.filter { $0.content == .mcuboot }
            let name = (file as NSString).lastPathComponent
            guard !candidates.isEmpty else {
                throw CommandFailure(
                    "\(name) holds no MCUboot image (\(package.format)); use 'mcumgr suit upload' for SUIT envelopes"
                )
            }
            if candidates.count == 1 { return candidates[0] }
            guard let image else {
                throw CommandFailure(
                    "\(name) holds \(candidates.count) images (\(candidates.map { "\($0.imageIndex)" }.joined(separator: ", "))); "
                        + "pick one with --image N, or use 'mcumgr upgrade \(name)'"
                )
            }
            guard let chosen = candidates.first(where: { $0.imageIndex == image }) else {
                throw CommandFailure("\(name) has no image \(image)")
            }
            return chosen
        }

        func run() async throws {
            let package = try loadPackage(file)
            let chosen = try selectImage(package)
            let target = image ?? chosen.imageIndex
            let sha256 = Data(ImageHashAlgorithm.sha256.hash(chosen.data))
            announce(chosen, image: target, sha256: sha256)
            var view = TransferProgressView(label: "upload", json: global.json)
            let sent: Sent
            do {
                sent = try await send(chosen, image: target, sha256: sha256, view: &view)
            } catch {
                throw view.ending(error, resumes: true)
            }
            view.finish()
            report(chosen, image: target, view: view, sent: sent)
        }

        /// What a finished upload learnt besides the bytes: how long it took, and whether the
        /// device is a bootloader.
        private struct Sent {
            /// From the first chunk to the last answer.
            var elapsed: Duration
            /// The device's list shows images but none running: it is a bootloader (serial
            /// recovery), where the upload replaced the application and a reset is what is left
            /// to do. An unanswered or empty list leaves the usual advice.
            var inBootloader: Bool
        }

        /// The `start` event, or two lines for people, before anything is sent.
        private func announce(_ chosen: FirmwarePackage.Image, image target: Int, sha256: Data) {
            let version = chosen.version.map { "\($0)" } ?? "?"
            let hash = Hex.encode(chosen.hash)
            if global.json {
                CommandSupport.emit(
                    .object([
                        ("event", .string("start")), ("file", .string(chosen.fileName)),
                        ("image", .int(Int64(target))), ("version", .string(version)), ("hash", .string(hash)),
                        ("sha", .string(Hex.encode(sha256))), ("len", .int(Int64(chosen.data.count))),
                    ])
                )
            } else {
                Console.out(
                    "uploading \(chosen.fileName): image \(target), version \(version), \(chosen.data.count) bytes"
                )
                Console.out("image hash \(hash)")
            }
        }

        /// Checks the fit, uploads, and reads the image list once done (for the advice only).
        /// - Throws: the link's error, a refusal explained, or an image too large for its slot.
        private func send(
            _ chosen: FirmwarePackage.Image,
            image target: Int,
            sha256: Data,
            view: inout TransferProgressView
        ) async throws -> Sent {
            let upload = ImageUpload(
                data: chosen.data,
                image: target,
                upgrade: upgrade,
                sha256: sha256,
                imageHash: chosen.hash
            )
            let options = TransferOptions(window: window, alignment: alignment)
            let clock = ContinuousClock()
            var sent = Sent(elapsed: .zero, inBootloader: false)
            try await CommandContext.withClient(global) { client in
                // Refused before the first chunk, which erases the slot.
                if let warning = try await checkFit(chosen, image: target, client: client) {
                    Console.err("warning: \(warning)")
                }
                // Timed from the first chunk, as `Sent` says: finding and connecting the device
                // (a Bluetooth scan can take seconds) is not the transfer's rate.
                let began = clock.now
                do {
                    for try await event in client.upload(upload, options: options) { view.update(event) }
                } catch let refusal as SMPDeviceError {
                    throw await ImageCommands.explain(
                        refusal,
                        image: target,
                        slot: nil,
                        client: client,
                        hints: CommandHints(global),
                        then: "upload again"
                    )
                }
                // An interrupt ends the event stream quietly: it is no finished upload.
                try Task.checkCancellation()
                sent.elapsed = clock.now - began
                guard !global.json, let slots = try? await client.send(ImageManagement.StateRead()).images
                else { return }
                sent.inBootloader = !slots.isEmpty && !slots.contains(where: \.isActive)
            }
            return sent
        }

        /// The `done` event, or the summary line with what to do next.
        private func report(_ chosen: FirmwarePackage.Image, image target: Int, view: TransferProgressView, sent: Sent)
        {
            let version = chosen.version.map { "\($0)" } ?? "?"
            let hash = Hex.encode(chosen.hash)
            if global.json {
                CommandSupport.emit(
                    .object([
                        ("event", .string("done")), ("image", .int(Int64(target))), ("version", .string(version)),
                        ("hash", .string(hash)), ("len", .int(Int64(chosen.data.count))),
                        ("resent", .int(Int64(view.resentBytes))),
                        ("seconds", TransferProgressView.jsonSeconds(sent.elapsed)),
                    ])
                )
                return
            }
            let resent = view.resentBytes > 0 ? ", \(view.resentBytes) bytes sent again" : ""
            // The rate counts what this run sent: after a resume the device held the rest.
            let done =
                view.resumedAt.map {
                    "\(TransferProgressView.bytes(chosen.data.count)), resumed at \(TransferProgressView.bytes($0)): "
                        + TransferProgressView.completion(bytes: chosen.data.count - $0, elapsed: sent.elapsed)
                } ?? TransferProgressView.completion(bytes: chosen.data.count, elapsed: sent.elapsed)
            let hints = CommandHints(global)
            let next =
                sent.inBootloader
                ? "the device is in its bootloader; next: \(hints.command("os reset")) (MCUboot boots the image if it accepts it)"
                : "next: \(hints.command("image test \(hash)"))"
            Console.out("uploaded \(done)\(resent); \(next)")
            if let note = hints.simulatorNote { Console.out(note) }
        }
    }

    // MARK: - test / confirm

    struct Test: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Mark an image to run once at the next reset (it reverts unless confirmed).",
            discussion: "HASH is the image hash from 'mcumgr image list', or a unique prefix of it."
        )
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The image hash (hex), or a unique prefix.") var hash: String

        func run() async throws {
            let response = try await CommandContext.withClient(global) { client in
                let bytes = try await ImageCommands.resolveHash(hash, client: client)
                return try await client.send(ImageManagement.StateWrite(hash: bytes, confirm: false))
            }
            try ImageCommands.show(response, json: global.json)
        }
    }

    struct Confirm: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Confirm the running image, or make the image with HASH permanent.",
            discussion: "Without HASH the running image is confirmed, which stops a pending revert."
        )
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The image hash (hex), or a unique prefix; omit to confirm the running image.")
        var hash: String?

        func run() async throws {
            let response = try await CommandContext.withClient(global) { client in
                let bytes = try await hash.asyncMap { try await ImageCommands.resolveHash($0, client: client) }
                return try await client.send(ImageManagement.StateWrite(hash: bytes, confirm: true))
            }
            try ImageCommands.show(response, json: global.json)
        }
    }

    // MARK: - erase

    struct Erase: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Erase a slot (default: the secondary slot).",
            discussion: "The device refuses to erase a slot whose image is marked for the next boot."
        )
        @OptionGroup var global: GlobalOptions
        @Option(help: "The slot to erase (default: the device's choice, the inactive slot).") var slot: UInt32?

        func run() async throws {
            let request = ImageManagement.Erase(slot: slot)
            _ = try await CommandContext.withClient(global) { client in
                do {
                    return try await client.send(request)
                } catch let refusal as SMPDeviceError {
                    throw await ImageCommands.explain(
                        refusal,
                        image: 0,
                        slot: slot.map(Int.init),
                        client: client,
                        hints: CommandHints(global),
                        then: "erase again"
                    )
                }
            }
            if global.json {
                try CommandSupport.emit(request: request)
            } else {
                Console.out(slot.map { "erased slot \($0)" } ?? "erased the inactive slot")
            }
        }
    }

    /// `NO_FREE_SLOT` said with what holds the slot and the ways out (`ImageStateGuard`, in the
    /// user's own `--conn`); any other refusal as it is.
    /// - Parameters:
    ///   - refusal: the device's refusal.
    ///   - image: the image number the command addressed.
    ///   - slot: the slot, when the command named one (an erase); else the slot not running.
    ///   - client: the connection, to read the image list.
    ///   - hints: how the user reached the device.
    ///   - then: what to do once the slot is free, e.g. "upload again".
    /// - Returns: the error to throw.
    static func explain(
        _ refusal: SMPDeviceError,
        image: Int,
        slot: Int?,
        client: SMPClient,
        hints: CommandHints,
        then: String
    ) async -> any Error {
        guard
            let explained = await ImageStateGuard.explain(
                refusal,
                image: image,
                slot: slot,
                client: client,
                command: hints.command,
                then: then
            )
        else { return refusal }
        return DeviceRefusal(explained.description, cause: refusal)
    }

    // MARK: - slots

    struct Slots: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the device's slots: size, upload target id and the largest image it accepts."
        )
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let response = try await CommandContext.withClient(global) { try await $0.send(ImageManagement.SlotInfo()) }
            if global.json {
                try CommandSupport.emit(response: response)
                return
            }
            guard !response.images.isEmpty else {
                Console.out("no slots reported")
                return
            }
            var rows: [[String]] = []
            for image in response.images {
                for slot in image.slots {
                    rows.append([
                        "\(image.image)", "\(slot.slot)",
                        "\(slot.size) (\(TransferProgressView.bytes(Int(clamping: slot.size))))",
                        slot.uploadImageID.map { "\($0)" } ?? "-",
                        image.maxImageSize.map { "\($0)" } ?? "-",
                    ])
                }
            }
            for line in CommandSupport.table(
                ["image", "slot", "size", "upload_image_id", "max_image_size"],
                rows,
                rightAligned: [0, 1, 3, 4]
            ) {
                Console.out(line)
            }
        }
    }
}

extension Optional {
    /// `map` with an async throwing transform.
    fileprivate func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let value = self else { return nil }
        return try await transform(value)
    }
}
