import Foundation
import MCUboot
import MCUmgr
import MCUmgrDFU
import SMPBytes
import SMPCore
import SMPPOSIX
import SMPSerialTransport
import SMPSimulator
import SMPTestSupport
import SMPUDPTransport
import Testing

@testable import MCUmgrCommands

@Suite struct UpgradeCommandTests {
    /// The example image the README upgrades to (Examples/make-example-image.sh).
    static let example = Peers.packageRoot.appendingPathComponent("Examples/hello-1.1.0.bin").path
    static let exampleHash = "4dc1dea590247be2334ec8a596233026e228c68cab551c8c909d26696e035e0c"

    /// The README's first command: the whole lifecycle on an in-process simulated device.
    @Test func theReadmeCommandUpgradesTheSimulatedDevice() async throws {
        let result = await CLI.sim("upgrade", Self.example)
        #expect(result.status == 0, "\(result.stderr)")
        let out = CLI.lines(result.stdout)
        #expect(out.contains { $0.contains("hello-1.1.0.bin: upgraded in") })
        let after = try #require(out.firstIndex(of: "after:"))
        let running = try #require(out[after...].first { $0.contains(Self.exampleHash) })
        #expect(running.contains("1.1.0"))
        #expect(running.contains("active confirmed"))
        #expect(out.contains("before:"))
        #expect(result.stderr.contains("» uploading"))
        #expect(result.stderr.contains("» verifying"))
        #expect(result.stderr.contains("100%"))
    }

    /// `-v` on a clean run: each state once, in order, and no resynchronisation chatter.
    @Test func verboseShowsEachStateOnceAndNothingWentWrong() async throws {
        let result = await CLI.sim("-v", "upgrade", Self.example)
        #expect(result.status == 0, "\(result.stderr)")
        let states = CLI.lines(result.stderr).filter { $0.hasPrefix("» ") }
        #expect(states.count == Set(states).count, "\(states)")
        #expect(!result.stderr.contains("upgrade state"))
        #expect(!result.stderr.contains("resynchronis"))
        #expect(!result.stderr.contains("window"))
    }

    /// Modes that stop short of a confirmed image say what the device is left with and the
    /// command that finishes the job; the modes that confirm say nothing more.
    /// The commands carry the user's own `--conn`; a `sim://` without a state folder, which the
    /// next command could not reach, gets a note saying how to keep the device instead.
    @Test(
        arguments: [
            (
                "upload-only",
                "image 0: 1.1.0 uploaded to slot 1, not marked; run `mcumgr --conn sim:// image test \(exampleHash)` (one boot, reverts unless confirmed) or `mcumgr --conn sim:// image confirm \(exampleHash)` (permanent), then `mcumgr --conn sim:// os reset`"
            ),
            (
                "test-only",
                "image 0: running 1.1.0 in test mode: confirm it (`mcumgr --conn sim:// image confirm \(exampleHash)`) or it reverts at the next reset"
            ),
            ("confirm-only", nil), ("test-and-confirm", nil),
        ] as [(String, String?)]
    )
    func theResultSaysWhatIsLeftToDo(_ mode: String, _ next: String?) async throws {
        let result = await CLI.sim("upgrade", Self.example, "--mode", mode)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = CLI.lines(result.stdout)
        if let next {
            #expect(lines.suffix(2) == [next, Self.simulatorNote], "\(result.stdout)")
        } else {
            #expect(!result.stdout.contains("mcumgr "), "\(result.stdout)")
        }
    }

    static let simulatorNote =
        "sim:// forgets the device when the command ends; to keep it for the next command, use --conn 'sim://?state_dir=DIR'"

    /// With a state folder the hint is a command that works: it names the same device.
    @Test func theNextCommandNamesTheSameDevice() async throws {
        let device = SimDevice()
        let result = await CLI.sim(arguments: ["upgrade", Self.example, "--mode", "test-only"], device: device)
        #expect(result.status == 0, "\(result.stderr)")
        let last = CLI.lines(result.stdout).last ?? ""
        #expect(last.contains("`mcumgr --conn '\(device.url)' image confirm \(Self.exampleHash)`"), "\(last)")
        let confirm = await CLI.run(["--conn", device.url, "image", "confirm", Self.exampleHash])
        #expect(confirm.status == 0, "\(confirm.stderr)")
    }

    /// The scenario of the report: 2.0.0 running unconfirmed after test-only, 1.0.0 its revert
    /// target. Upload-only of 3.0.0 resets nothing and refuses with status 1, naming the state and
    /// the two ways out; another mode does the same and offers --revert-pending, which reverts
    /// (a step of the plan) and then upgrades.
    @Test func aRunningTestImageIsNeverRevertedUnasked() async throws {
        let device = SimDevice()
        let folder = device.folder
        let v2 = folder.appendingPathComponent("app-2.0.0.bin").path
        let v3 = folder.appendingPathComponent("app-3.0.0.bin").path
        try Data(FactoryImage.make(version: ImageVersion(major: 2, minor: 0, revision: 0))).write(
            to: URL(fileURLWithPath: v2)
        )
        try Data(FactoryImage.make(version: ImageVersion(major: 3, minor: 0, revision: 0))).write(
            to: URL(fileURLWithPath: v3)
        )
        let tested = await CLI.sim(arguments: ["upgrade", v2, "--mode", "test-only"], device: device)
        #expect(tested.status == 0, "\(tested.stderr)")
        let running = try #require(try MCUbootImage(bytes: Array(Data(contentsOf: URL(fileURLWithPath: v2)))).hash)
        let list = await CLI.run(["--conn", device.url, "image", "list"])
        let conn = "mcumgr --conn '\(device.url)'"
        let state =
            "image 0: 2.0.0 runs unconfirmed (a test) and slot 1 holds 1.0.0, which the next reset brings back (a revert); nothing was changed: keep 2.0.0 with `\(conn) image confirm \(Hex.encode(running))`, or let it revert with `\(conn) os reset`, then run the upgrade again"

        let uploadOnly = await CLI.sim(arguments: ["upgrade", v3, "--mode", "upload-only"], device: device)
        #expect(uploadOnly.status == 1)
        #expect(CLI.lines(uploadOnly.stderr).last == "error: upgrade failed while validating: " + state)
        #expect(!uploadOnly.stderr.contains("» resetting"))
        #expect(await CLI.run(["--conn", device.url, "image", "list"]).stdout == list.stdout)

        let refused = await CLI.sim(arguments: ["upgrade", v3, "--mode", "test-and-confirm"], device: device)
        #expect(refused.status == 1)
        #expect(
            CLI.lines(refused.stderr).last
                == "error: upgrade failed while validating: " + state
                + " (or add --revert-pending to let it revert first)"
        )
        #expect(await CLI.run(["--conn", device.url, "image", "list"]).stdout == list.stdout)

        let both = await CLI.sim(
            arguments: ["upgrade", v3, "--mode", "upload-only", "--revert-pending"],
            device: device
        )
        #expect(both.status == 64)
        #expect(both.stderr.contains("--revert-pending resets the device, and --mode upload-only never does"))

        let reverted = await CLI.sim(
            arguments: ["upgrade", v3, "--mode", "test-and-confirm", "--revert-pending"],
            device: device
        )
        #expect(reverted.status == 0, "\(reverted.stderr)")
        #expect(
            reverted.stdout.contains(
                "  steps: reset to revert (MCUboot reverts image 0 from 2.0.0 to 1.0.0), then plan again"
            ),
            "\(reverted.stdout)"
        )
        #expect(CLI.lines(reverted.stdout).contains { $0.hasPrefix("app-3.0.0.bin: upgraded in") })
    }

    /// Upload-only says what it did: an upload.
    @Test func uploadOnlySaysUploaded() async throws {
        let result = await CLI.sim("upgrade", Self.example, "--mode", "upload-only")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            CLI.lines(result.stdout).first { $0.hasPrefix("hello-1.1.0.bin: ") }?.hasPrefix(
                "hello-1.1.0.bin: uploaded in"
            ) == true
        )
        #expect(!result.stderr.contains("» resetting"))
    }

    @Test(arguments: ["test-and-confirm", "confirm-only", "test-only", "upload-only"])
    func everyModeRunsAndReportsJSONLines(_ mode: String) async throws {
        let result = await CLI.sim("upgrade", Self.example, "--mode", mode, "--json")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty)
        let lines = try CLI.jsonLines(result.stdout)
        let events = lines.compactMap { $0["event"] as? String }
        #expect(events.first == "state")
        #expect(events.contains("plan"))
        #expect(events.contains("progress"))
        #expect(events.last == "completed")
        let completed = try #require(lines.last)
        #expect(completed["mode"] as? String == mode)
        let after = try #require(completed["after"] as? [[String: Any]])
        let new = try #require(after.first { $0["hash"] as? String == Self.exampleHash })
        let expectedActive = mode != "upload-only"
        #expect(new["active"] as? Bool == expectedActive)
        #expect(new["confirmed"] as? Bool == (mode == "test-and-confirm" || mode == "confirm-only"))
        let progress = lines.filter { $0["event"] as? String == "progress" }
        #expect(progress.last?["total_off"] as? Int == progress.last?["total_len"] as? Int)
    }

    @Test(arguments: ["swap", "overwrite", "direct-xip", "direct-xip-revert"])
    func everyBootloaderEndsWithTheImageRunning(_ bootloader: String) async throws {
        let device = SimDevice(options: "mode=\(bootloader)")
        let result = await CLI.sim(
            arguments: ["upgrade", Self.example, "--mode", "test-and-confirm", "--json"],
            device: device
        )
        #expect(result.status == 0, "\(result.stderr)")
        let completed = try #require(try CLI.jsonLines(result.stdout).last)
        let after = try #require(completed["after"] as? [[String: Any]])
        #expect(after.contains { $0["hash"] as? String == Self.exampleHash && $0["active"] as? Bool == true })

        // The device keeps it: a second upgrade has nothing to do.
        let again = await CLI.sim(arguments: ["upgrade", Self.example], device: device)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.contains("already runs it"))
    }

    /// A second test-only run keeps the reminder; a confirm-only run after it uploads nothing and
    /// says it confirmed, not "0 B uploaded".
    @Test func aRunThatOnlyConfirmsSaysSoAndATestedImageKeepsItsReminder() async throws {
        let device = SimDevice(options: "mode=swap")
        let first = await CLI.sim(arguments: ["upgrade", Self.example, "--mode", "test-only"], device: device)
        #expect(first.status == 0, "\(first.stderr)")
        let reminder = "running 1.1.0 in test mode: confirm it"
        #expect(first.stdout.contains(reminder), "\(first.stdout)")
        let again = await CLI.sim(arguments: ["upgrade", Self.example, "--mode", "test-only"], device: device)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.contains("nothing to do") && again.stdout.contains(reminder), "\(again.stdout)")
        let confirm = await CLI.sim(arguments: ["upgrade", Self.example, "--mode", "confirm-only"], device: device)
        #expect(confirm.status == 0, "\(confirm.stderr)")
        let done = CLI.lines(confirm.stdout).first { $0.hasPrefix("hello-1.1.0.bin: ") }
        #expect(done?.contains(": confirmed in ") == true, "\(confirm.stdout)")
        #expect(
            done?.hasSuffix("(the image was already on the device, nothing uploaded; mode confirm-only)") == true,
            "\(confirm.stdout)"
        )
        #expect(!confirm.stdout.contains("0 B uploaded") && !confirm.stdout.contains(reminder), "\(confirm.stdout)")
    }

    @Test func plainLinesShowThePlanAndStates() async throws {
        let result = await CLI.sim("upgrade", Self.example, "--mode", "test-only")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("plan (test-only"))
        #expect(result.stdout.contains("upload to slot 1"))
        for state in ["uploading", "testing", "resetting", "reconnecting", "verifying"] {
            #expect(result.stderr.contains("» \(state)"), "\(state)")
        }
    }

    /// A dead device: the upgrade ends at its first request (the parameters, sent twice with
    /// `--retries 1`), before anything else, with the link status. Bound by what crossed the link:
    /// a ladder of probes or a request after the first would show as more datagrams.
    @Test func aSilentDeviceEndsTheUpgradeAtTheFirstRequest() async throws {
        let silent = try SilentDevice()
        let result = await CLI.run(
            ["--conn", silent.url, "--timeout", "1", "--retries", "1", "upgrade", Self.example]
        )
        #expect(result.status == 2)
        // No "run the same command again to resume": nothing reached the device to resume from.
        #expect(
            CLI.lines(result.stderr).last
                == "error: upgrade failed while requesting-parameters: the device does not answer (timed out: no "
                + "answer to os command 6 (MCUmgrParameters) after 2 attempts of 1.0 seconds)"
        )
        #expect(try silent.datagrams() == 2)
    }

    /// Refused with the refusal's words: waiting for the hour-long timeout instead would end
    /// with other words, and only after the test's time limit.
    @Test(.timeLimit(.minutes(5))) func aClosedPortEndsTheUpgradeAtOnce() async throws {
        let url = try closedUDPPort()
        let result = await CLI.run(["--conn", url, "--timeout", "3600", "--retries", "0", "upgrade", Self.example])
        #expect(result.status == 2)
        #expect(
            CLI.lines(result.stderr).last
                == "error: upgrade failed while requesting-parameters: the device refused the connection "
                + "(connection refused: nothing listens at \(url) (the host answered ICMP port unreachable): check the port, and "
                + "that the device runs its SMP server)"
        )
    }

    @Test func aMissingFileIsOneLineOnStderr() async {
        let result = await CLI.sim("upgrade", "/nonexistent/app.bin")
        #expect(result.status == 66)
        #expect(result.stdout.isEmpty)
        #expect(CLI.lines(result.stderr).count == 1)
        #expect(result.stderr.contains("/nonexistent/app.bin"))
    }

    @Test func badOptionsAreUsageErrors() async {
        for arguments in [["--mode", "sideways"], ["--window", "0"], ["--alignment", "3"], ["--swap-time", "-1"]] {
            let result = await CLI.sim(arguments: ["upgrade", Self.example] + arguments)
            #expect(result.status == 64, "\(arguments)")
            #expect(result.stderr.hasPrefix("error: "), "\(arguments)")
        }
    }

    /// An older image than the running one is named as a downgrade in the result (this device
    /// has no downgrade prevention, so it takes it); an upgrade to a newer one says nothing of it.
    @Test func aDowngradeIsNamedAsOne() async throws {
        let device = SimDevice(options: "version=2.0.0")
        let result = await CLI.sim(arguments: ["upgrade", Self.example], device: device)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(CLI.lines(result.stdout).contains("image 0: a downgrade, from 2.0.0 to 1.1.0"), "\(result.stdout)")
        let upgrade = await CLI.sim("upgrade", Self.example)
        #expect(upgrade.status == 0, "\(upgrade.stderr)")
        #expect(!upgrade.stdout.contains("downgrade"), "\(upgrade.stdout)")
    }

    /// A device with a newer factory image and downgrade prevention that cannot say so (Zephyr
    /// 3.4): MCUboot erases the example at the boot; the outcome is not what the mode promised
    /// (status 3).
    @Test func aFailedUpgradeNamesTheStateAndExitsWithTheOutcomeStatus() async throws {
        let device = SimDevice(options: "mode=overwrite&version=2.0.0&no_downgrade=1")
        let result = await CLI.sim(arguments: ["upgrade", Self.example, "--json"], device: device)
        #expect(result.status == 3)
        #expect(CLI.lines(result.stderr).count == 1)
        #expect(result.stderr.contains("upgrade failed while verifying"))
        let lines = try CLI.jsonLines(result.stdout)
        // The engine's own failure event, then the error object every failing command ends with.
        let failed = try #require(lines.dropLast().last)
        #expect(failed["event"] as? String == "failed")
        #expect((lines.last?["error"] as? [String: Any])?["status"] as? Int == 3)
        #expect(failed["state"] as? String == "verifying")
        // The error object's vocabulary, and its words.
        #expect(failed["code"] as? String == "image_missing_after_reset")
        #expect(failed["kind"] as? String == "upgrade_outcome")
        #expect(failed["message"] as? String == (lines.last?["error"] as? [String: Any])?["message"] as? String)
    }

    /// The same device on newer Zephyr reports no-downgrade: refused before the first chunk
    /// (status 1), or uploaded anyway with `--allow-downgrade` (then erased: status 3).
    @Test func aReportedNoDowngradeRefusesBeforeUploading() async throws {
        let device = SimDevice(options: "mode=overwrite&version=2.0.0&no_downgrade=1&zephyr=latest")
        let result = await CLI.sim(arguments: ["upgrade", Self.example], device: device)
        #expect(result.status == 1)
        #expect(CLI.lines(result.stderr).last?.contains("older than the running 2.0.0") == true)
        #expect(!result.stderr.contains("» uploading"))
        let insisted = await CLI.sim(arguments: ["upgrade", Self.example, "--allow-downgrade"], device: device)
        #expect(insisted.status == 3, "\(insisted.stderr)")
        #expect(insisted.stderr.contains("will erase it"))
    }
}

/// The engine over the real links: a UDP socket and a pseudo-terminal, each served by the
/// simulator. (The loopback matrix and the fault soak are in MCUmgrDFUTests.)
@Suite struct FirmwareUpgradeOverLinksTests {
    enum Link: String, Sendable, CaseIterable {
        case udp
        case pty
    }

    struct Combination: Sendable, CustomTestStringConvertible {
        var link: Link
        var mode: FirmwareUpgrade.Mode
        var bootloader: BootloaderMode
        var images: Int
        var faults: [Fault] = []
        var testDescription: String {
            "\(mode) on \(bootloader), \(images) image(s) over \(link)" + (faults.isEmpty ? "" : " with \(faults)")
        }
    }

    static let combinations: [Combination] = Link.allCases.flatMap { link in
        FirmwareUpgrade.Mode.allCases.flatMap { mode in
            [BootloaderMode.swapUsingMove, .overwriteOnly, .directXIP, .directXIPWithRevert].flatMap { bootloader in
                [1, 2].map { Combination(link: link, mode: mode, bootloader: bootloader, images: $0) }
            }
        }
    }

    static let faultCombinations: [Combination] = Link.allCases.flatMap { link in
        [
            [Fault.dropResponsesRandomly(probability: 0.1)], [.powerLoss(.duringUpload(atOffset: 900))],
            [.powerLoss(.duringSwap)], [.busy(count: 4)],
        ].map { Combination(link: link, mode: .testAndConfirm, bootloader: .swapUsingMove, images: 1, faults: $0) }
    }

    /// What each mode promises for the new images, by bootloader.
    static func promiseKept(_ combination: Combination, states: [ImageManagement.SlotState], hashes: [[UInt8]]) -> Bool
    {
        hashes.allSatisfy { hash in
            guard let entry = states.first(where: { $0.hash.map(Array.init) == hash }) else { return false }
            switch (combination.bootloader, combination.mode) {
            // Upload-only never resets, whatever the bootloader.
            case (_, .uploadOnly): return !entry.isActive
            case (.directXIP, _): return entry.isActive && entry.isConfirmed
            case (.overwriteOnly, _): return entry.isActive && entry.isConfirmed
            case (_, .testOnly): return entry.isActive && !entry.isConfirmed
            default: return entry.isActive && entry.isConfirmed
            }
        }
    }

    static func images(_ count: Int) throws -> [FirmwarePackage.Image] {
        try (0..<count).map { index in
            let bytes = FactoryImage.make(version: ImageVersion(major: 2, minor: 0, revision: 0), image: index)
            return FirmwarePackage.Image(try MCUbootImage(bytes: bytes), imageIndex: index, slot: 1)
        }
    }

    @Test(arguments: combinations + faultCombinations)
    func endsInThePromisedState(_ combination: Combination) async throws {
        // A device that reboots quickly (10 ms after answering, back 200 ms later), as in the
        // engine's own tests; the observed second-long reboot is tested there and by `sim://`.
        let device = SimulatedDevice(
            configuration: .init(
                bufferSize: combination.link == .udp ? 2048 : 512,
                resetDelay: .milliseconds(10),
                bootTime: .milliseconds(200),
                imageCount: combination.images,
                bootloaderMode: combination.bootloader
            )
        )
        await device.setFaults(Faults(combination.faults, seed: 11))
        let transport: any SMPTransport
        let stop: @Sendable () async -> Void
        switch combination.link {
        case .udp:
            let server = try SimulatedUDPServer(device: device, host: "127.0.0.1", port: 0)
            server.start()
            transport = UDPTransport(host: "127.0.0.1", port: server.localAddress.port)
            stop = { await server.stop() }
        case .pty:
            let server = try SimulatedSerialServer(device: device, framing: .console, baudRate: nil)
            server.start()
            transport = SerialTransport(path: server.slavePath, baudRate: 115_200)
            stop = { await server.stop() }
        }
        let images = try Self.images(combination.images)
        let upgrade = FirmwareUpgrade(
            transport: transport,
            configuration: .init(
                mode: combination.mode,
                firstChunkTimeout: .seconds(2),
                probeTimeout: .milliseconds(150),
                probeInterval: .milliseconds(20),
                rebootTimeout: .seconds(1),
                reconnectTimeout: .seconds(15),
                reconnectInterval: .milliseconds(20),
                retries: 5
            ),
            clientConfiguration: .init(timeout: .milliseconds(500), retries: 4, busyBackoff: .milliseconds(5))
        )
        var failure: (any Error)?
        do {
            for try await _ in upgrade.run(images: images) {}
        } catch {
            failure = error
        }
        await stop()
        #expect(failure == nil, "\(String(describing: failure))")
        let states = await device.imageStates
        #expect(Self.promiseKept(combination, states: states, hashes: images.map(\.hash)), "\(states)")
        await device.setFaults(.none)
        await device.reset()
        #expect(await device.isRunning)
    }
}

/// `mcumgr upgrade` on single-slot devices and devices in serial recovery, as typed.
@Suite struct UpgradeCommandRecoveryTests {
    @Test("upgrade --recovery over the pty: a device started in serial recovery ends running the image")
    func recoveryOverThePty() async throws {
        let device = SimulatedDevice(
            configuration: .init(
                resetDelay: .milliseconds(10),
                bootTime: .milliseconds(200),
                bootloaderMode: .singleSlot,
                startsInRecovery: true
            )
        )
        let server = try SimulatedSerialServer(device: device, framing: .console, baudRate: nil)
        server.start()
        let result = await CLI.run([
            "--conn", server.endpointURL, "upgrade", UpgradeCommandTests.example, "--recovery",
        ])
        await server.stop()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("upload to the application slot"))
        let running = await device.imageStates.first { $0.isActive }
        #expect(running?.hash.map(Array.init) == Hex.decode(UpgradeCommandTests.exampleHash))
    }

    @Test("upgrade --recovery against a running application: exit 1, an error line saying to drop --recovery")
    func recoveryFlagOnApplication() async throws {
        let result = await CLI.sim("upgrade", UpgradeCommandTests.example, "--recovery")
        #expect(result.status == 1)
        let errors = CLI.lines(result.stderr).filter { $0.hasPrefix("error: ") }
        #expect(errors.count == 1, "\(result.stderr)")
        #expect(errors.first?.contains("without --recovery") == true)
        #expect(CLI.internalNames(in: result.stderr) == [])
    }

    @Test("single-slot and firmware-loader devices on sim://: the plan shows the reset into the bootloader")
    func singleSlotPlan() async throws {
        for mode in ["single-slot", "firmware-loader"] {
            let result = await CLI.run([
                "--conn", "sim://?mode=\(mode)&reset_ms=10&boot_ms=200", "upgrade", UpgradeCommandTests.example,
            ])
            #expect(result.status == 0, "\(mode): \(result.stderr)")
            #expect(result.stdout.contains("steps: reset into the bootloader, upload image 0"), "\(result.stdout)")
        }
    }
}

/// Ctrl-C during `upgrade`.
@Suite struct UpgradeInterruptTests {
    /// Mid-upload: status 130 and one line saying how far the upload got, which replaced the bar
    /// (the states shown before it stay); the same command again continues the upload where the
    /// device stopped and completes the upgrade.
    @Test func anInterruptedUpgradeSaysHowFarAndTheSameCommandResumes() async throws {
        let scratch = Scratch()
        let file = try scratch.file("big.bin", try BLEBenchmark.syntheticImage(size: 96 * 1024))
        let device = SimDevice(options: "latency_ms=10")
        let arguments = ["upgrade", file, "--conn", device.url]
        let run = await CLI.interrupt(arguments) { CLI.percentages(in: $0).contains { $0 > 0 } }
        #expect(run.status == 130, "\(run.terminal.written)")
        let screen = run.terminal.screen
        let line = try #require(screen.last)
        let percent = try #require(CLI.percentages(in: line).first)
        #expect(line == "error: interrupted at \(percent)%; run the same command again to resume")
        #expect((1...99).contains(percent))
        // Above it: the states, each on its own line, and nothing of the bar.
        #expect(screen.dropLast().allSatisfy { $0.hasPrefix("» ") }, "\(screen)")
        #expect(screen.dropLast().last == "» uploading", "\(screen)")

        let again = await CLI.run(arguments)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stderr.contains("resume: image 0: the device continues the upload at"), "\(again.stderr)")
        #expect(again.stdout.contains("big.bin: upgraded in"))
    }

    /// The link lost mid-upload for good: the bar's line says the upgrade reconnects and how
    /// much longer it tries; the error says where the upload stopped and that the same command
    /// resumes — which it does, once the device answers again.
    @Test func aLinkLostMidUploadSaysItReconnectsThenHowToResume() async throws {
        let scratch = Scratch()
        let image = FactoryImage.make(version: ImageVersion(major: 2, minor: 0, revision: 0), payloadSize: 96 * 1024)
        let file = try scratch.file("big.bin", Data(image))
        let device = SimulatedDevice(configuration: .init())
        // Parameters, bootloader info twice, the list, the slot sizes, then 15 chunks: silence.
        await device.setFaults(Faults([.silence(afterRequests: 20)]))
        let server = try SimulatedUDPServer(device: device, host: "127.0.0.1", port: 0)
        server.start()
        // A request timeout a loaded machine cannot reach by accident (at 1 s a run beside the
        // rest of the suite lost the link once before the silence, and reconnected twice).
        let options = ["--reconnect-timeout", "2", "--timeout", "3", "--retries", "1"]
        let run = await CLI.runOnTerminal(
            ["upgrade", file, "--conn", "udp://127.0.0.1:\(server.localAddress.port)"] + options
        )
        #expect(run.status == 2, "\(run.terminal.written)")
        let screen = run.terminal.screen
        let error = try #require(screen.last)
        let percent = try #require(CLI.percentages(in: error).first, "\(screen)")
        #expect((1...99).contains(percent))
        #expect(
            error.hasPrefix(
                "error: upgrade failed while reconnecting: the device did not answer again within 2.0 seconds"
            )
        )
        #expect(error.hasSuffix("; the upload stopped at \(percent)%: run the same command again to resume"))
        let reconnecting = screen.filter { $0.hasPrefix("  reconnecting (the link was lost at ") }
        #expect(reconnecting.count == 1, "\(screen)")
        #expect(
            reconnecting.first?.wholeMatch(
                of: #/  reconnecting \(the link was lost at \d+%\): attempt \d+, trying \d s more/#
            )
                != nil,
            "\(screen)"
        )
        await server.stop()

        // The device comes back with what it received.
        await device.setFaults(.none)
        let again = try SimulatedUDPServer(device: device, host: "127.0.0.1", port: 0)
        again.start()
        let resumed = await CLI.run(["upgrade", file, "--conn", "udp://127.0.0.1:\(again.localAddress.port)"])
        await again.stop()
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(resumed.stderr.contains("resume: image 0: the device continues the upload at"), "\(resumed.stderr)")
    }

    /// Interrupted in a step that is no transfer: the line names the step.
    @Test func anInterruptAfterTheUploadNamesTheStep() async throws {
        let device = SimDevice(options: "reset_ms=500&boot_ms=2000")
        let run = await CLI.interrupt(["upgrade", UpgradeCommandTests.example, "--conn", device.url]) {
            $0.contains("» reconnecting") || $0.contains("» waiting-for-reboot")
        }
        #expect(run.status == 130, "\(run.terminal.written)")
        let line = try #require(run.terminal.screen.last)
        #expect(line.hasPrefix("error: interrupted while "), "\(run.terminal.screen)")
        #expect(line.hasSuffix("; run the same command again to resume"))
        #expect(!line.contains("%"))
    }
}
