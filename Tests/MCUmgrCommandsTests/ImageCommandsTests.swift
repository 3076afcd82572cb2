import Foundation
import MCUboot
import SMPBytes
import SMPCore
import SMPPOSIX
import SMPSimulator
import Testing

@testable import MCUmgrCommands

/// `mcumgr image list|upload|test|confirm|erase|slots` against the simulated device.
@Suite struct ImageCommandsTests {
    static let factoryHash = "863a2709d8d2c69d900205d09d2629a0e9055ab8d9c12cf1c698308a039e67e8"
    static let unsignedHash = "87088ceee65866b4f7f5c23eb3909b69af073cd7959d45c342c083dc83b8df7f"

    @Test func listIsATableWithFlagsAndFullHashes() async {
        let result = await CLI.sim("image", "list")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stdout == """
                image  slot  version  flags                      hash
                    0     0  1.0.0    active confirmed bootable  \(Self.factoryHash)

                """
        )
        #expect(result.stderr == "")
    }

    /// `--short` shows the first 8 hex digits of each hash (a prefix `image test` takes).
    @Test func listShortShortensHashes() async throws {
        let result = await CLI.sim("image", "list", "--short")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stdout == """
                image  slot  version  flags                      hash
                    0     0  1.0.0    active confirmed bootable  \(Self.factoryHash.prefix(8))…

                """
        )
        // JSON is for programs: the whole hash.
        let json = await CLI.sim("image", "list", "--short", "--json")
        #expect(json.stdout.contains(Self.factoryHash))
    }

    @Test func listJSONUsesWireNamesAndEveryFlag() async throws {
        let result = await CLI.sim("image", "list", "--json")
        #expect(result.status == 0)
        #expect(
            result.stdout.hasPrefix(
                #"{"images":[{"image":0,"slot":0,"version":"1.0.0","hash":"\#(Self.factoryHash)","bootable":true,"pending":false,"confirmed":true,"active":true,"permanent":false}]"#
            )
        )
        #expect(CLI.lines(result.stdout).count == 1)
    }

    @Test func uploadTestConfirmEraseRoundTrip() async throws {
        let device = SimDevice()
        let upload = await CLI.sim("image", "upload", CLI.fixture("unsigned.bin"), device: device)
        #expect(upload.status == 0, "\(upload.stderr)")
        let lines = CLI.lines(upload.stdout)
        #expect(lines.count == 3)
        #expect(lines[0] == "uploading unsigned.bin: image 0, version 1.2.3, 1576 bytes")
        #expect(lines[1] == "image hash \(Self.unsignedHash)")
        #expect(lines[2].hasPrefix("uploaded 1.5 KiB in "))
        #expect(lines[2].hasSuffix("; next: mcumgr --conn '\(device.url)' image test \(Self.unsignedHash)"))
        // Progress went to stderr as plain lines (stderr is not a terminal here).
        #expect(CLI.lines(upload.stderr).last?.hasPrefix("upload  100%  1.5 KiB/1.5 KiB") == true)

        let listed = await CLI.sim("image", "list", device: device)
        #expect(
            CLI.lines(listed.stdout).last == "    0     1  1.2.3    bootable                   \(Self.unsignedHash)"
        )

        // A unique prefix of the hash is enough.
        let tested = await CLI.sim("image", "test", "8708", device: device)
        #expect(tested.status == 0, "\(tested.stderr)")
        #expect(
            CLI.lines(tested.stdout).last == "    0     1  1.2.3    pending bootable           \(Self.unsignedHash)"
        )

        // Erasing a slot marked for the next boot is refused, by name, with what holds it.
        let refused = await CLI.sim("image", "erase", device: device)
        #expect(refused.status == 1)
        #expect(
            refused.stderr
                == "error: the device refused: image error 9 NO_FREE_SLOT: image 0: slot 1 holds 1.2.3 marked for test, which the next reset boots once; nothing was changed: boot it yourself with `mcumgr --conn '\(device.url)' os reset` if you mean to, then erase again\n"
        )

        let confirmed = await CLI.sim("image", "confirm", Self.unsignedHash, "--json", device: device)
        #expect(confirmed.status == 0, "\(confirmed.stderr)")
        let images = try #require(try CLI.json(confirmed.stdout)["images"] as? [[String: Any]])
        #expect(images.last?["permanent"] as? Bool == true)
        #expect(images.last?["pending"] as? Bool == true)
    }

    @Test func uploadJSONIsOneObjectPerLine() async throws {
        let result = await CLI.sim("image", "upload", CLI.fixture("unsigned.bin"), "--json", "--window", "2")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr == "")
        let events = try CLI.jsonLines(result.stdout)
        #expect(events.first?["event"] as? String == "start")
        #expect(events.first?["hash"] as? String == Self.unsignedHash)
        #expect(events.first?["len"] as? Int == 1576)
        #expect(events.dropFirst().dropLast().allSatisfy { $0["event"] as? String == "progress" })
        #expect(events.dropLast().last?["off"] as? Int == 1576)
        #expect(events.last?["event"] as? String == "done")
    }

    @Test func uploadRefusesAPackageOfSeveralImagesWithoutImage() async {
        let result = await CLI.sim("image", "upload", CLI.fixture("dfu_application.zip"))
        #expect(result.status == 1)
        #expect(
            result.stderr
                == "error: dfu_application.zip holds 2 images (0, 1); pick one with --image N, or use 'mcumgr upgrade dfu_application.zip'\n"
        )
    }

    @Test func uploadOfAMissingFileNamesIt() async {
        let result = await CLI.sim("image", "upload", "/nonexistent/app.bin")
        #expect(result.status == 66)
        #expect(result.stderr == "error: cannot read /nonexistent/app.bin: No such file or directory\n")
    }

    /// The observed failure at default settings, fixed: to a device over UDP with four buffers
    /// (the observed server), an upload at default settings uses `buf_count − 1` and sends nothing
    /// twice; forced to a window of 8 it runs the device out of buffers, adapts, completes, and
    /// says how much it sent again — a bounded amount. The device takes 200 ms a chunk (a slow
    /// flash write) rather than the observed 0.8 ms, so that a burst fills its pool even when a
    /// loaded machine spaces out the client's sends (at 10 ms a chunk, a run beside the rest of the
    /// suite sent them slower than the device handled them, and nothing was refused).
    @Test func uploadsOverUDPAtDefaultSettingsAndWithAWindowForcedTooLarge() async throws {
        let device = SimulatedDevice(
            configuration: .init(bufferSize: 2048, bufferCount: 4, requestProcessingTime: .milliseconds(200))
        )
        let server = try SimulatedUDPServer(device: device, host: "127.0.0.1", port: 0)
        server.start()
        let scratch = SimDevice()
        let file = scratch.scratch("app-2.0.0.bin")
        let image = FactoryImage.make(version: ImageVersion(major: 2, minor: 0, revision: 0), payloadSize: 30_000)
        try Data(image).write(to: URL(fileURLWithPath: file))
        let conn = "udp://127.0.0.1:\(server.localAddress.port)"

        // A request timeout a loaded machine cannot reach: a late answer would be sent again.
        let plain = await CLI.run(["--conn", conn, "--timeout", "20", "-v", "image", "upload", file])
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(!plain.stdout.contains("sent again"), "\(plain.stdout)")
        #expect(!plain.stderr.contains("adapting the window"), "\(plain.stderr)")
        #expect(await device.requestsRefusedForBuffers == 0)

        _ = await CLI.run(["--conn", conn, "image", "erase"])
        let forced = await CLI.run(["--conn", conn, "-vv", "image", "upload", file, "--window", "8"])
        #expect(forced.status == 0, "\(forced.stderr)")
        #expect(forced.stderr.contains("adapting the window to the device"))
        let line = try #require(CLI.lines(forced.stdout).first { $0.hasPrefix("uploaded ") })
        let resent = try #require(
            line.split(separator: ",").first { $0.contains("bytes sent again") }.flatMap {
                Int($0.trimmingCharacters(in: .whitespaces).split(separator: " ")[0])
            }
        )
        // Every change of the window, as -vv logs it: "window 8 → 7: <why>".
        let changes = CLI.lines(forced.stderr).compactMap { line -> (from: Int, to: Int, why: Substring)? in
            guard let match = line.firstMatch(of: /window (\d+) → (\d+): (.+)$/),
                let from = Int(match.1), let to = Int(match.2)
            else { return nil }
            return (from, to, match.3)
        }
        let outOfBuffers = "the device ran out of buffers (ENOMEM)"
        #expect(changes.contains { $0.why == outOfBuffers }, "\(forced.stderr)")
        // A size that ran the device out of buffers is never used again.
        for (index, change) in changes.enumerated() where change.why == outOfBuffers {
            #expect(changes[(index + 1)...].allSatisfy { $0.to < change.from }, "\(changes)")
        }
        // A chunk is sent again only after back-pressure — a refusal for buffers (counted by the
        // device) or, on a loaded machine, an answer that came late — and each costs at most the
        // window then in flight: 8 chunks of 1448 data bytes (a 1472-byte datagram). With timing
        // left out of it, anything beyond is not back-pressure.
        let refusals = await device.requestsRefusedForBuffers
        let late = changes.filter { $0.why == "a chunk got no answer" }.count
        let bound = (refusals + late) * 8 * 1_448
        print("window forced to 8 over UDP: \(resent) bytes sent again for \(image.count), bound \(bound)")
        #expect(resent > 0 && resent <= bound, "\(resent) > \(bound)\n\(changes)")
        #expect(refusals >= 1)
        let states = await device.imageStates
        #expect(states.contains { $0.slot == 1 && $0.version == "2.0.0" })
        await server.stop()
    }

    @Test func uploadOptionsAreValidated() async {
        let result = await CLI.sim("image", "upload", CLI.fixture("unsigned.bin"), "--window", "0")
        #expect(result.status == 64)
        #expect(result.stderr == "error: --window must be from 1 to 64\n")
    }

    /// `--alignment` and `--window` are checked alike by `image upload` and `upgrade`, negative
    /// numbers included (a range error, not "missing value").
    @Test(arguments: [
        (["--alignment", "-1"], "error: --alignment must be a power of two from 1 to 256 (1, 2, 4, 8, 16, …)\n"),
        (["--alignment", "0"], "error: --alignment must be a power of two from 1 to 256 (1, 2, 4, 8, 16, …)\n"),
        (["--alignment", "3"], "error: --alignment must be a power of two from 1 to 256 (1, 2, 4, 8, 16, …)\n"),
        (["--alignment", "512"], "error: --alignment must be a power of two from 1 to 256 (1, 2, 4, 8, 16, …)\n"),
        (["--window", "-1"], "error: --window must be from 1 to 64\n"),
    ])
    func uploadAndUpgradeCheckAlike(_ options: [String], _ message: String) async {
        for verb in [["image", "upload"], ["upgrade"]] {
            let result = await CLI.sim(arguments: verb + [CLI.fixture("unsigned.bin")] + options)
            #expect(result.status == 64, "\(verb)")
            #expect(result.stderr == message, "\(verb)")
        }
    }

    /// An alignment both accept, beyond the old upgrade limit of 16.
    @Test func anAlignmentOf32IsAcceptedByBoth() async {
        let upload = await CLI.sim("image", "upload", CLI.fixture("unsigned.bin"), "--alignment", "32")
        #expect(upload.status == 0, "\(upload.stderr)")
        let upgrade = await CLI.sim("upgrade", "/nonexistent/app.bin", "--alignment", "32")
        #expect(upgrade.status == 66, "\(upgrade.stderr)")
    }

    /// Local files: each problem one line with the file's name and the status of the table.
    @Test func localFileProblemsAreOneLine() async throws {
        let scratch = Scratch()
        let empty = try scratch.file("empty.bin", Data())
        let text = try scratch.file("notes.txt", Data("hello".utf8))
        let cases: [([String], Int32, String)] = [
            (["image", "upload", scratch.folder.path], 66, "error: \(scratch.folder.path) is a folder, not a file\n"),
            (["image", "upload", empty], 65, "error: empty.bin: empty file\n"),
            (
                ["image", "upload", text], 65,
                "error: notes.txt starts with 68 65 6c 6c: not an MCUboot image (3d b8 f3 96), a zip (50 4b 03 04) "
                    + "or a SUIT envelope (d8 6b)\n"
            ),
        ]
        for (arguments, status, message) in cases {
            let result = await CLI.sim(arguments: arguments)
            #expect(result.status == status, "\(arguments)")
            #expect(result.stderr == message, "\(arguments)")
        }
    }

    @Test func testingTheRunningImageIsRefusedByName() async {
        let result = await CLI.sim("image", "test", Self.factoryHash)
        #expect(result.status == 1)
        #expect(result.stderr == "error: the device refused: image error 33 IMAGE_SETTING_TEST_TO_ACTIVE_DENIED\n")
    }

    @Test func anUnknownHashPrefixIsExplained() async {
        let result = await CLI.sim("image", "test", "abcd")
        #expect(result.status == 1)
        #expect(
            result.stderr == "error: no image on the device has a hash starting with abcd; see 'mcumgr image list'\n"
        )
    }

    @Test func confirmWithoutHashConfirmsTheRunningImage() async {
        let result = await CLI.sim("image", "confirm")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(CLI.lines(result.stdout).count == 2)
    }

    /// Zephyr 3.4 (the default device, as observed) refuses to erase a slot that is already
    /// blank, with image error 1 (fixed in Zephyr 3.6); a slot holding an image erases.
    @Test func erasingABlankSlotFailsOnZephyr34ButAWrittenOneErases() async {
        let device = SimDevice()
        let blank = await CLI.sim("image", "erase", device: device)
        #expect(blank.status == 1)
        #expect(blank.stdout == "")
        #expect(blank.stderr == "error: the device refused: image error 1 UNKNOWN\n")
        let upload = await CLI.sim("image", "upload", CLI.fixture("unsigned.bin"), device: device)
        #expect(upload.status == 0, "\(upload.stderr)")
        let written = await CLI.sim("image", "erase", device: device)
        #expect(written.status == 0, "\(written.stderr)")
        #expect(written.stdout == "erased the inactive slot\n")
    }

    @Test func eraseTheInactiveSlot() async {
        let latest = "sim://?zephyr=latest"
        let result = await CLI.run(["image", "erase", "--conn", latest])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "erased the inactive slot\n")
        let slot = await CLI.run(["image", "erase", "--slot", "1", "--json", "--conn", latest])
        #expect(slot.status == 0, "\(slot.stderr)")
        #expect(slot.stdout == #"{"slot":1}"# + "\n")
    }

    /// NO_FREE_SLOT names what holds the slot and the ways out: a test image running unconfirmed
    /// keeps its revert target there; the running slot is never erased.
    /// On `sim://` without a state folder the next command could not reach the device: the hint
    /// says how to keep it.
    @Test func aForgettingSimulatorSaysHowToKeepTheDevice() async throws {
        let result = await CLI.sim("image", "upload", CLI.fixture("unsigned.bin"))
        #expect(result.status == 0, "\(result.stderr)")
        let lines = CLI.lines(result.stdout)
        #expect(lines.last == UpgradeCommandTests.simulatorNote)
        #expect(
            lines.dropLast().last?.hasSuffix("; next: mcumgr --conn sim:// image test \(Self.unsignedHash)") == true
        )
    }

    @Test func noFreeSlotSaysWhatHoldsTheSlot() async throws {
        let device = SimDevice()
        let scratch = Scratch()
        let v2 = try scratch.file(
            "v2.bin",
            Data(FactoryImage.make(version: ImageVersion(major: 2, minor: 0, revision: 0)))
        )
        let v3 = try scratch.file(
            "v3.bin",
            Data(FactoryImage.make(version: ImageVersion(major: 3, minor: 0, revision: 0)))
        )
        #expect(await CLI.sim(arguments: ["upgrade", v2, "--mode", "test-only"], device: device).status == 0)
        let running = try #require(
            try MCUbootImage(bytes: FactoryImage.make(version: ImageVersion(major: 2, minor: 0, revision: 0))).hash
        )
        let conn = "mcumgr --conn '\(device.url)'"
        let held =
            "image 0: 2.0.0 runs unconfirmed (a test) and slot 1 holds 1.0.0, which the next reset brings back (a revert); nothing was changed: keep 2.0.0 with `\(conn) image confirm \(Hex.encode(running))`, or let it revert with `\(conn) os reset`"
        let upload = await CLI.sim(arguments: ["image", "upload", v3], device: device)
        #expect(upload.status == 1)
        #expect(
            CLI.lines(upload.stderr).last
                == "error: the device refused: image error 9 NO_FREE_SLOT: \(held), then upload again"
        )
        let erase = await CLI.sim(arguments: ["image", "erase"], device: device)
        #expect(erase.stderr == "error: the device refused: image error 9 NO_FREE_SLOT: \(held), then erase again\n")
        let json = await CLI.sim(arguments: ["image", "erase", "--json"], device: device)
        #expect((try CLI.json(json.stdout)["error"] as? [String: Any])?["kind"] as? String == "device_refused")
        let active = await CLI.sim(arguments: ["image", "erase", "--slot", "0"], device: device)
        #expect(
            active.stderr
                == "error: the device refused: image error 9 NO_FREE_SLOT: slot 0 holds the running image (2.0.0); erase the other slot\n"
        )
    }

    /// The slot sizes the device reports bound an upload before its first chunk, which erases
    /// the slot: too large is refused with both sizes (65); within MCUboot's trailer of the end is
    /// a warning (the simulated MCUboot then erases it at boot, as the real one did).
    @Test func anImageTooLargeForTheSlotIsRefusedBeforeTheFirstChunk() async throws {
        let scratch = Scratch()
        let slot = 262_144
        func image(_ total: Int) throws -> String {
            let bytes = FactoryImage.make(
                version: ImageVersion(major: 4, minor: 0, revision: 0),
                payloadSize: total - 0x200 - 40
            )
            #expect(bytes.count == total)
            return try scratch.file("app-\(total).bin", Data(bytes))
        }
        let large = try image(slot + 8)
        for command in [["image", "upload", large], ["upgrade", large]] {
            let refused = await CLI.run(command + ["--conn", "sim://?slot_size=\(slot)"])
            #expect(refused.status == 65, "\(command)")
            #expect(
                CLI.lines(refused.stderr).last?.hasSuffix(
                    "app-\(slot + 8).bin (image 0) is \(slot + 8) bytes and the device takes at most \(slot) there (the size of slot 1); nothing was uploaded"
                ) == true,
                "\(refused.stderr)"
            )
            #expect(!refused.stderr.contains("uploading"))
        }
        // Newer Zephyr with its "too large" checks reports max_image_size, which counts the trailer.
        let latest = await CLI.run([
            "image", "upload", try image(slot - 100), "--conn", "sim://?slot_size=\(slot)&zephyr=latest",
        ])
        #expect(latest.status == 65)
        #expect(
            CLI.lines(latest.stderr).last?.hasSuffix(
                "the device takes at most \(slot - 432) there (max_image_size); nothing was uploaded"
            ) == true
        )

        let edge = try image(slot - 100)
        let warning =
            "app-\(slot - 100).bin (image 0) is \(slot - 100) bytes and leaves 100 of the \(slot) in slot 1; MCUboot keeps the end of the slot for its trailer (432 bytes with Zephyr's default settings, more with others): it may erase the image at boot"
        let uploaded = await CLI.run(["image", "upload", edge, "--conn", "sim://?slot_size=\(slot)"])
        #expect(uploaded.status == 0, "\(uploaded.stderr)")
        #expect(CLI.lines(uploaded.stderr).first == "warning: " + warning)
        let upgraded = await CLI.run(["upgrade", edge, "--conn", "sim://?slot_size=\(slot)&reset_ms=10&boot_ms=100"])
        #expect(upgraded.stderr.contains("  warning: " + warning))
        #expect(upgraded.status == 3)
        #expect(CLI.lines(upgraded.stderr).last?.contains("no room left in the slot for its trailer") == true)
    }

    @Test func slotsShowSizes() async throws {
        let result = await CLI.sim("image", "slots")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stdout == """
                image  slot  size                upload_image_id  max_image_size
                    0     0  262144 (256.0 KiB)                -               -
                    0     1  262144 (256.0 KiB)                -               -

                """
        )
        let json = try CLI.json(await CLI.sim("image", "slots", "--json").stdout)
        let image = try #require((json["images"] as? [[String: Any]])?.first)
        #expect((image["slots"] as? [[String: Any]])?.map { $0["size"] as? Int } == [262_144, 262_144])
    }
}

/// Ctrl-C during `image upload`.
@Suite struct ImageUploadInterruptTests {
    /// Mid-upload: status 130 and one line saying how far it got and what to do, on a terminal
    /// left with that line only (it replaced the bar); the same command again continues where the
    /// device stopped and completes.
    @Test func anInterruptedUploadSaysHowFarAndTheSameCommandResumes() async throws {
        let scratch = Scratch()
        let image = try BLEBenchmark.syntheticImage(size: 96 * 1024)
        let file = try scratch.file("big.bin", image)
        let device = SimDevice(options: "latency_ms=10")
        let arguments = ["image", "upload", file, "--conn", device.url]
        // Once the bar shows the device confirmed something.
        let run = await CLI.interrupt(arguments) { CLI.percentages(in: $0).contains { $0 > 0 } }
        #expect(run.status == 130, "\(run.terminal.written)")
        let screen = run.terminal.screen
        #expect(screen.count == 1, "\(screen)")
        let line = try #require(screen.last)
        let percent = try #require(CLI.percentages(in: line).first)
        #expect(line == "error: interrupted at \(percent)%; run the same command again to resume")
        #expect((1...99).contains(percent))
        // The last bar drawn is not ahead of what the line says.
        let drawn = CLI.percentages(in: run.terminal.written).dropLast()
        #expect((drawn.max() ?? 0) <= percent, "\(drawn)")

        let again = await CLI.run(arguments)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stderr.contains("upload  the device continues an interrupted upload at"), "\(again.stderr)")
        #expect(again.stdout.contains("uploaded 96.0 KiB, resumed at "), "\(again.stdout)")
        let list = await CLI.run(["image", "list", "--json", "--conn", device.url])
        let hash = try #require(try MCUbootImage(bytes: Array(image)).hash)
        #expect(list.stdout.contains(Hex.encode(hash)))
    }
}

/// `image list --json` from the response type.
@Suite struct ImageListJSONTests {
    /// A frugal list (false flags and the image number left out) prints every flag and the
    /// number; `splitStatus`, the one wire key not in snake_case, prints as `split_status`; a
    /// slot without a hash (serial recovery without the hash option) has `"hash": null`, so that
    /// scripts find the same keys everywhere.
    @Test func everyFlagAndTheImageNumberAreWrittenOut() throws {
        let frugal = ImageManagement.StateRead.Response(
            images: [
                .init(
                    slot: 0,
                    version: "1.0.0",
                    hash: Data([0xab, 0xcd]),
                    bootable: true,
                    confirmed: true,
                    active: true
                ),
                .init(slot: 1, version: "1.1.0"),
            ],
            splitStatus: 0
        )
        #expect(
            try ImageCommands.json(frugal).rendered()
                == #"{"images":[{"image":0,"slot":0,"version":"1.0.0","hash":"abcd","bootable":true,"pending":false,"#
                + #""confirmed":true,"active":true,"permanent":false},{"image":0,"slot":1,"version":"1.1.0","#
                + #""hash":null,"bootable":false,"pending":false,"confirmed":false,"active":false,"permanent":false}],"#
                + #""split_status":0}"#
        )
    }
}

/// `image list` and `image upload` against MCUboot's serial recovery work as against an
/// application; the upload ends by saying a reset is what is left.
@Suite struct ImageCommandsRecoveryTests {
    @Test func listAndUploadInSerialRecovery() async throws {
        let device = SimDevice(options: "mode=single-slot&recovery=1")
        let list = await CLI.run(["image", "list", "--json", "--conn", device.url])
        #expect(list.status == 0, "\(list.stderr)")
        let before = try #require(try CLI.json(list.stdout)["images"] as? [[String: Any]])
        #expect(before.map { $0["version"] as? String } == ["1.0.0"])
        // Serial recovery reports no flags: nothing runs.
        #expect(before.allSatisfy { $0["active"] as? Bool == false })

        let upload = await CLI.run(["image", "upload", UpgradeCommandTests.example, "--conn", device.url])
        #expect(upload.status == 0, "\(upload.stderr)")
        let last = try #require(CLI.lines(upload.stdout).last)
        #expect(
            last.hasSuffix(
                "the device is in its bootloader; next: mcumgr --conn '\(device.url)' os reset (MCUboot boots the image if it accepts it)"
            )
        )

        let after = await CLI.run(["image", "list", "--conn", device.url])
        #expect(after.status == 0)
        #expect(after.stdout.contains(UpgradeCommandTests.exampleHash))
        #expect(after.stdout.contains("1.1.0"))
    }
}
