import Foundation
import MCUboot
import SMPTestSupport
import Testing

@testable import MCUmgrCommands

/// `mcumgr ui` in a real browser: the built `mcumgr` serves the page, headless Chromium
/// (Debian's `chromium`, driven by Playwright, `Tests/Browser/drive-ui.py`) uses it as a person
/// would, and a `mcumgr simulator` on UDP is the device. What the device holds afterwards is read
/// by smpclient, an independent client, never taken from the page.
@Suite(.serialized) struct UIBrowserTests {
    /// The processes of one test: the simulated device, the page's server, a scratch folder.
    struct Bench {
        /// The `mcumgr simulator` process, unless the page starts its own devices.
        let simulator: RunningProcess?
        let ui: RunningProcess
        let device: String
        /// Every simulated device's inventory line (`URL NAME`), one per line.
        let inventory: String
        /// The first device's pseudo-terminal (`serial:///dev/pts/N`), when it serves one.
        var serial: String?
        let page: String
        let folder: URL

        /// Starts a simulator (512 KiB slots) and `mcumgr ui` on free ports (no simulator for
        /// `count` 0: the page's Simulator screen starts the devices).
        /// - Parameters:
        ///   - processing: microseconds the simulated device takes per request, so an upload
        ///     lasts long enough to be watched and paused.
        ///   - count: simulated devices (a fleet for the Fleet screen).
        ///   - simulatorOptions: more `mcumgr simulator` options.
        ///   - environment: `NAME=VALUE` settings of `mcumgr ui`'s environment.
        ///   - uiOptions: more `mcumgr ui` options.
        ///   - pty: the one device serves a pseudo-terminal too (``serial``), beside UDP.
        static func start(
            processing: Int = 800,
            count: Int = 1,
            pty: Bool = false,
            simulatorOptions: [String] = [],
            environment: [String] = [],
            uiOptions: [String] = []
        ) async throws -> Bench {
            let mcumgr = try EntryTests.executable()
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mcumgr-ui-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let ui = RunningProcess(
                "/usr/bin/env",
                ["MCUMGR_CONFIG_DIR=\(folder.path)"] + environment + [mcumgr, "ui", "--listen", "127.0.0.1:0"]
                    + uiOptions,
                timeout: .seconds(1_800)
            )
            guard count > 0 else {
                let page = try await Self.firstLine(of: ui, startingWith: "http://127.0.0.1:")
                return Bench(
                    simulator: nil,
                    ui: ui,
                    device: "-",
                    inventory: "",
                    serial: nil,
                    page: page,
                    folder: folder
                )
            }
            let simulator = RunningProcess(
                mcumgr,
                [
                    "simulator", "--udp", "127.0.0.1:0", "--stats", folder.appendingPathComponent("stats.json").path,
                    "--slot-size", "0x80000", "--processing-us", String(processing),
                ] + (pty ? ["--pty"] : ["--count", String(count)]) + simulatorOptions,
                timeout: .seconds(1_800)
            )
            // Each simulated device: its inventory line, `URL NAME`.
            _ = try await simulator.waitForOutput { out, _ in
                CLI.lines(out).count { $0.hasPrefix("udp://") } >= count
            }
            let lines = CLI.lines(simulator.output.stdout).filter { $0.hasPrefix("udp://") }
            let line = try #require(lines.first, "no udp:// line: \(simulator.output.stderr)")
            let device = String(line.split(separator: " ")[0])
            let page = try await Self.firstLine(of: ui, startingWith: "http://127.0.0.1:")
            return Bench(
                simulator: simulator,
                ui: ui,
                device: device,
                inventory: lines.joined(separator: "\n"),
                serial: pty ? try await Self.firstLine(of: simulator, startingWith: "serial://") : nil,
                page: page,
                folder: folder
            )
        }

        static func firstLine(of process: RunningProcess, startingWith prefix: String) async throws -> String {
            _ = try await process.waitForOutput { out, _ in CLI.lines(out).contains { $0.hasPrefix(prefix) } }
            let line = CLI.lines(process.output.stdout).first { $0.hasPrefix(prefix) }
            return try #require(line, "no \(prefix) line: \(process.output.stderr)")
        }

        func stop() {
            simulator?.stop()
            ui.stop()
            try? FileManager.default.removeItem(at: folder)
        }

        /// Runs a scenario of the browser driver and returns what the page showed.
        /// - Parameters:
        ///   - scenario: the driver's scenario.
        ///   - firmware: the firmware file it sends.
        ///   - target: what it is given as its device (default: the first device's URL).
        func drive(_ scenario: String, firmware: String? = nil, target: String? = nil) async throws -> [String: Any] {
            let python = try #require(Peers.python)
            let driver = Peers.packageRoot.appendingPathComponent("Tests/Browser/drive-ui.py").path
            let output: Data
            do {
                output = try await Peers.run(
                    python,
                    [driver, scenario, page, target ?? device] + (firmware.map { [$0] } ?? [])
                )
            } catch {
                // A CI run once found the page's port refusing connections (ERR_CONNECTION_REFUSED
                // at the first visit) and nothing said why: say what the server did.
                let server = ui.hasExited ? "had exited" : "was running"
                let simulated = simulator.map {
                    "; the simulator \($0.hasExited ? "had exited" : "was running"), "
                        + "its stderr: \($0.output.stderr.suffix(1_000))"
                }
                let detail = "mcumgr ui \(server), its stderr: \(ui.output.stderr.suffix(2_000))\(simulated ?? "")"
                Issue.record(Comment(rawValue: detail))
                throw error
            }
            return try #require(try JSONSerialization.jsonObject(with: output) as? [String: Any])
        }

        /// Runs Python with smpclient connected to a device (`client`, in `main()`); the
        /// device's port is `sys.argv[1]`, `arguments` follow it.
        func smpclient(_ url: String? = nil, _ body: String, _ arguments: [String] = []) async throws -> Data {
            let port = try #require((url ?? device).split(separator: ":").last.map(String.init))
            let script = """
                import asyncio, sys
                from smpclient import SMPClient
                from smpclient.transport.udp import SMPUDPTransport
                from smpclient.requests.image_management import ImageStatesRead
                async def main():
                    client = SMPClient(SMPUDPTransport(), "127.0.0.1")
                    await client._transport.connect("127.0.0.1", 5.0, int(sys.argv[1]))
                \(body)
                    await client.disconnect()
                asyncio.run(main())
                """
            return try await Peers.python(script, [port] + arguments)
        }

        /// The device's slots as smpclient reads them: `image/slot version flags`.
        /// - Parameter url: another device of the fleet than the first.
        func slotsBySmpclient(_ url: String? = nil) async throws -> [String] {
            let output = try await smpclient(
                url,
                """
                    answer = await client.request(ImageStatesRead(), timeout_s=10.0)
                    for s in answer.images:
                        flags = [f for f in ("active", "confirmed", "pending", "permanent") if getattr(s, f)]
                        print(f"{s.image or 0}/{s.slot} {s.version} {' '.join(flags)}".strip())
                """
            )
            return CLI.lines(String(decoding: output, as: UTF8.self))
        }

        /// What the simulated device received so far (uploads started, resets, requests).
        func counters() async throws -> [String: Int] {
            let path = folder.appendingPathComponent("stats.json").path
            let byName = try await FleetAcceptanceTests.snapshot(try #require(simulator), path)
            return try #require(byName.values.first, "\(byName)")
        }

        /// A file on the device as smpclient downloads it.
        func fileBySmpclient(_ path: String) async throws -> Data {
            try await smpclient(
                nil,
                "    sys.stdout.buffer.write(await client.download_file(sys.argv[2], timeout_s=10.0))",
                [path]
            )
        }

        /// A firmware file in the scratch folder: an MCUboot image of `size` bytes.
        func firmware(version: (UInt8, UInt8), size: Int) throws -> String {
            let file = folder.appendingPathComponent("app-\(version.0).\(version.1).bin")
            try BLEBenchmark.syntheticImage(size: size, version: version).write(to: file)
            return file.path
        }
    }

    /// Connect, read the slots, upgrade in test-and-confirm, see the slots change; progress
    /// reached the page as the upload went. The page follows the upgrade's live events only once
    /// its start is answered, so the upload must outlast a loaded browser's way there: at 5 ms a
    /// request a 96 KiB upload (half a second) was over before the page listened, beside
    /// stress-ng, and the page saw 0 % then 100 %. At 30 ms a request 384 KiB take over ten
    /// seconds, as the cancel test's upload does.
    @Test(Peers.needed("playwright", "smpclient", "chromium"))
    func upgradeInTestAndConfirm() async throws {
        let bench = try await Bench.start(processing: 30_000)
        defer { bench.stop() }
        let firmware = try bench.firmware(version: (2, 0), size: 384 * 1024)
        let shown = try await bench.drive("upgrade", firmware: firmware)
        let before = try #require(shown["before"] as? [[String]])
        #expect(before.first?.prefix(3) == ["0", "0", "1.0.0"], "\(before)")
        #expect(shown["status"] as? String == "app-2.0.bin (test-and-confirm): succeeded", "\(shown)")
        let after = try #require(shown["after"] as? [[String]])
        #expect(after.first?.prefix(3) == ["0", "0", "2.0.0"], "\(after)")
        let progress = try #require(shown["progress"] as? [Int])
        #expect(progress.contains { $0 > 0 && $0 < 100 }, "the page saw the upload midway: \(progress)")
        #expect(progress.last == 100, "\(progress)")
        #expect(try await bench.slotsBySmpclient().first == "0/0 2.0.0 active confirmed")
    }

    /// The same over a serial line: the page connects to the simulated device's pseudo-terminal
    /// (`serial://`, SMP's console framing), reads the slots and upgrades in test-and-confirm
    /// through the device's reset; smpclient, over the same device's UDP endpoint (a terminal
    /// has room for one client), finds the new image running and confirmed. The device takes
    /// 30 ms a request, so the slots read afresh after the upgrade come well after the screen
    /// shows: the page must not show the earlier reading's rows meanwhile (it did, and the
    /// driver read 1.0.0 from them).
    @Test(Peers.needed("playwright", "smpclient", "chromium"))
    func upgradeOverASerialLine() async throws {
        let bench = try await Bench.start(processing: 30_000, pty: true)
        defer { bench.stop() }
        let serial = try #require(bench.serial)
        let firmware = try bench.firmware(version: (2, 0), size: 24 * 1024)
        let shown = try await bench.drive("upgrade", firmware: firmware, target: serial)
        let before = try #require(shown["before"] as? [[String]])
        #expect(before.first?.prefix(3) == ["0", "0", "1.0.0"], "\(before)")
        #expect(shown["status"] as? String == "app-2.0.bin (test-and-confirm): succeeded", "\(shown)")
        let after = try #require(shown["after"] as? [[String]])
        #expect(after.first?.prefix(3) == ["0", "0", "2.0.0"], "\(after)")
        #expect(try await bench.slotsBySmpclient().first == "0/0 2.0.0 active confirmed")
    }

    /// Pause mid-upload, cancel: the operation says so; the same file started again resumes where
    /// the upload stopped (the progress bar does not start from zero) and the upgrade completes,
    /// having started one upload on the device, not two.
    @Test(Peers.needed("playwright", "smpclient", "chromium"))
    func cancelMidUploadThenResume() async throws {
        let bench = try await Bench.start(processing: 30_000)
        defer { bench.stop() }
        let firmware = try bench.firmware(version: (2, 0), size: 384 * 1024)
        let shown = try await bench.drive("cancel-and-resume", firmware: firmware)
        #expect((shown["cancelled"] as? String)?.contains(": cancelled") == true, "\(shown)")
        let cancelledAt = try #require(shown["cancelled_at"] as? Int)
        #expect(cancelledAt > 0 && cancelledAt < 100, "\(shown)")
        let resumed = try #require(shown["progress_after"] as? [Int])
        #expect(resumed.first { $0 > 0 }.map { $0 >= cancelledAt } == true, "resumed, not restarted: \(resumed)")
        #expect(shown["status"] as? String == "app-2.0.bin (test-and-confirm): succeeded", "\(shown)")
        #expect(try await bench.slotsBySmpclient().first == "0/0 2.0.0 active confirmed")
        #expect(try await bench.counters()["uploads_started"] == 1, "resumed, not started again")
    }

    /// A test image is pending (put there with the command line): the page's upgrade is refused
    /// with the command line's words, and the slots are as they were.
    @Test(Peers.needed("playwright", "smpclient", "chromium"))
    func anUpgradeIsRefusedWhileATestImageIsPending() async throws {
        let bench = try await Bench.start()
        defer { bench.stop() }
        let pending = try bench.firmware(version: (1, 5), size: 16 * 1024)
        let upload = await CLI.run(["image", "upload", pending, "--conn", bench.device])
        try #require(upload.status == 0, "\(upload.stderr)")
        let image = try MCUbootImage(bytes: [UInt8](try Data(contentsOf: URL(fileURLWithPath: pending))))
        let hash = try #require(image.hash).map { String(format: "%02x", $0) }.joined()
        let test = await CLI.run(["image", "test", hash, "--conn", bench.device])
        try #require(test.status == 0, "\(test.stderr)")
        let before = try await bench.slotsBySmpclient()
        #expect(before == ["0/0 1.0.0 active confirmed", "0/1 1.5.0 pending"], "\(before)")
        let shown = try await bench.drive(
            "refused-when-pending",
            firmware: try bench.firmware(version: (2, 0), size: 16 * 1024)
        )
        let words = [shown["alert"], shown["status"], shown["result"]].compactMap { $0 as? String }.joined(
            separator: "\n"
        )
        #expect(words.contains("nothing was changed"), "\(shown)")
        #expect(words.contains("image confirm") || words.contains("os reset"), "the ways out are named: \(shown)")
        #expect(try await bench.slotsBySmpclient() == before)
        #expect(try await bench.counters()["uploads_started"] == 1, "only the command line's upload")
    }

    /// Another page on this machine (same site, so the browser sends the token's cookie) tries
    /// to erase the inactive slot and reset the device right after a real visit; only the
    /// server's Origin rule is in its way, and nothing on the device changes. The page under a
    /// rebound name gets 421.
    @Test(Peers.needed("playwright", "smpclient", "chromium"))
    func anotherPageCannotChangeTheDevice() async throws {
        let bench = try await Bench.start()
        defer { bench.stop() }
        let upload = await CLI.run([
            "image", "upload", try bench.firmware(version: (1, 5), size: 16 * 1024), "--conn", bench.device,
        ])
        try #require(upload.status == 0, "\(upload.stderr)")
        let before = try await bench.slotsBySmpclient()
        #expect(before == ["0/0 1.0.0 active confirmed", "0/1 1.5.0"], "\(before)")
        let shown = try await bench.drive("cross-origin")
        let attempts = try #require(shown["attempts"] as? [[String: Any]])
        #expect(attempts.count == 2, "\(shown)")
        #expect(shown["rebound_status"] as? Int == 421, "\(shown)")
        #expect((shown["rebound_body"] as? String)?.contains("open the URL it printed") == true, "\(shown)")
        #expect(try await bench.slotsBySmpclient() == before, "\(attempts)")
        #expect(try await bench.counters()["resets"] == 0, "\(attempts)")
    }

    /// A file uploaded from the page is on the device (smpclient downloads the same bytes),
    /// comes back through Download and Save, shows in the folder listing; shell commands print
    /// their output and return code, and the up arrow recalls an earlier one.
    @Test(Peers.needed("playwright", "smpclient", "chromium"))
    func aFileRoundTripAndShellCommands() async throws {
        let bench = try await Bench.start()
        defer { bench.stop() }
        let local = bench.folder.appendingPathComponent("notes.bin")
        let bytes = Data((0..<3_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) })
        try bytes.write(to: local)
        let shown = try await bench.drive("files-and-shell", firmware: local.path)
        #expect((shown["uploaded"] as? String)?.hasPrefix("upload /lfs1/notes.bin: succeeded") == true, "\(shown)")
        #expect(shown["round_trip"] as? Bool == true, "\(shown)")
        #expect((shown["listing"] as? String)?.contains("notes.bin") == true, "\(shown)")
        let terminal = try #require(shown["terminal"] as? String)
        #expect(terminal.contains("$ echo hello from the page\nhello from the page\n"), "\(terminal)")
        #expect(shown["shell_status"] as? String == "'kernel' returned 1 on the device", "\(shown)")
        #expect(shown["recalled"] as? String == "echo hello from the page", "\(shown)")
        #expect(try await bench.fileBySmpclient("/lfs1/notes.bin") == bytes)
    }

    /// The Fleet screen over three simulated devices on UDP, in two waves: the table says every
    /// device went from 1.0.0 to 2.0.0 in this run, the gauges are full and empty, and smpclient
    /// finds 2.0.0 running, confirmed, on each device.
    @Test(Peers.needed("playwright", "smpclient", "chromium"))
    func aRolloutFromTheFleetScreen() async throws {
        let bench = try await Bench.start(count: 3)
        defer { bench.stop() }
        let firmware = try bench.firmware(version: (2, 0), size: 32 * 1024)
        let shown = try await bench.drive("fleet", firmware: firmware, target: bench.inventory)
        #expect(shown["status"] as? String == "app-2.0.bin (confirm-only): finished", "\(shown)")
        let rows = try #require(shown["rows"] as? [[String]])
        #expect(rows.count == 3, "\(shown)")
        for row in rows { #expect(Array(row.dropFirst().prefix(4)) == ["upgraded", "1.0.0 → 2.0.0", "1", "this run"]) }
        let gauges = try #require(shown["gauges"] as? [String: [Int]])
        #expect(gauges["Waves"] == [2, 2] && gauges["Failure budget"] == [0, 1], "\(gauges)")
        #expect(shown["summary"] as? String == "3 upgraded\nthis run contacted 3 devices", "\(shown)")
        #expect(shown["halt_enabled"] as? Bool == false)
        for line in bench.inventory.split(separator: "\n") {
            let url = String(line.split(separator: " ")[0])
            #expect(try await bench.slotsBySmpclient(url).first == "0/0 2.0.0 active confirmed", "\(url)")
        }
    }

    /// The Simulator screen: ten devices started from the page, one refusing uploads; they
    /// become the Fleet screen's inventory and a rollout runs over them (nine upgraded, one
    /// failed); a power cycle from the page reboots a device. smpclient, not the page, reads
    /// what each device runs afterwards.
    @Test(Peers.needed("playwright", "smpclient", "chromium"))
    func tenSimulatedDevicesFromThePageWithOneFaulty() async throws {
        let bench = try await Bench.start(count: 0)
        defer { bench.stop() }
        let firmware = try bench.firmware(version: (2, 0), size: 16 * 1024)
        let shown = try await bench.drive("simulator", firmware: firmware)
        #expect(shown["alert"] as? String == "", "\(shown)")
        let before = try #require(shown["before"] as? [[String]])
        #expect(before.map { $0[0] } == (1...10).map { $0 < 10 ? "sim-00\($0)" : "sim-0\($0)" }, "\(before)")
        let faulty = before.filter { $0[5].contains("refuse uploads") }
        #expect(faulty.count == 1, "\(before)")
        #expect(shown["next_boot"] as? String == "image 0: boot primary", "\(shown)")
        #expect(shown["next_running"] as? String == "then runs image 0: 1.0.0 from slot 0", "\(shown)")
        let inventory = try #require(shown["inventory"] as? String)
        #expect(inventory.split(separator: "\n").count == 10)
        #expect(inventory.contains("\(faulty.first?[0] ?? "?") fault=refusing"), "\(inventory)")

        #expect(shown["status"] as? String == "app-2.0.bin (confirm-only): finished", "\(shown)")
        #expect((shown["summary"] as? String)?.hasPrefix("9 upgraded, 1 failed") == true, "\(shown)")
        let rows = try #require(shown["fleet_rows"] as? [[String]])
        #expect(rows.count == 10)
        for row in rows {
            let refusing = row.first == faulty.first?[0]
            #expect(row[1] == (refusing ? "failed" : "upgraded"), "\(row)")
        }
        for device in before {
            let expected = device[0] == faulty.first?[0] ? "0/0 1.0.0 active confirmed" : "0/0 2.0.0 active confirmed"
            #expect(try await bench.slotsBySmpclient(device[1]).first == expected, "\(device)")
        }

        let healthy = try #require(shown["healthy"] as? String)
        let after = try #require((shown["after"] as? [[String]])?.first { $0[0] == healthy })
        let bootsBefore = try #require(Int(shown["boots_before"] as? String ?? ""))
        #expect(Int(after[3]) == bootsBefore + 1, "\(after)")
        #expect((shown["detail"] as? String)?.contains("boots \(bootsBefore + 1)") == true, "\(shown)")
        #expect(try await bench.slotsBySmpclient(after[1]).first == "0/0 2.0.0 active confirmed")
    }

    /// Statistics, Settings and Raw from the page, each checked by code we did not write: the
    /// counters' names are smpclient's, the setting written is what smpclient reads, the raw
    /// request's body is cbor2's encoding of the JSON typed.
    @Test(Peers.needed("playwright", "smpclient", "chromium"))
    func statisticsSettingsAndRawAreWhatOtherClientsSee() async throws {
        // Zephyr's newer answers: smpclient refuses the `rc: 0` that Zephyr 3.4 puts in its
        // statistics answers (a peer defect, shown by `smpmgrRefusesTheReturnCodeZephyr34PutsInStatistics`).
        let bench = try await Bench.start(simulatorOptions: ["--zephyr", "latest"])
        defer { bench.stop() }
        let shown = try await bench.drive("screens")
        #expect(shown["alert"] as? String == "", "\(shown)")
        let group = try #require(shown["group"] as? String)
        let counters = try #require(shown["counters"] as? [[String]])
        let names = try await bench.smpclient(
            nil,
            """
                from smpclient.requests.statistics_management import GroupData
                answer = await client.request(GroupData(name=sys.argv[2]), timeout_s=10.0)
                print("\\n".join(answer.fields.keys()))
            """,
            [group]
        )
        #expect(counters.map { $0[0] } == CLI.lines(String(decoding: names, as: UTF8.self)), "\(counters)")
        #expect(counters.allSatisfy { Int($0[1]) != nil }, "\(counters)")

        #expect(shown["read"] as? String == "app/greeting: hello web", "\(shown)")
        let setting = try await bench.smpclient(
            nil,
            """
                from smpclient.requests.settings_management import ReadSetting
                answer = await client.request(ReadSetting(name="app/greeting"), timeout_s=10.0)
                sys.stdout.buffer.write(answer.val)
            """
        )
        #expect(String(decoding: setting, as: UTF8.self) == "hello web")

        #expect((shown["answer"] as? String)?.contains("raw hi") == true, "\(shown)")
        let hex = try #require(shown["request_hex"] as? String).filter(\.isHexDigit).lowercased()
        let body = try await Peers.python("import cbor2; print(cbor2.dumps({'d': 'raw hi'}).hex())")
        let expected = String(decoding: body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(hex.count == 16 + expected.count && hex.hasSuffix(expected), "\(hex) after the header: \(expected)")
    }

    /// The keyboard alone: connect, choose firmware and mode, start, read the slots; the focused
    /// control has a visible outline. smpclient reads the upgrade's result.
    @Test(Peers.needed("playwright", "smpclient", "chromium"))
    func theWholeUpgradeWithTheKeyboardAlone() async throws {
        let bench = try await Bench.start(processing: 0)
        defer { bench.stop() }
        let firmware = try bench.firmware(version: (2, 0), size: 16 * 1024)
        let shown = try await bench.drive("keyboard", firmware: firmware)
        #expect(shown["alert"] as? String == "", "\(shown)")
        #expect(shown["mode"] as? String == "test-and-confirm")
        #expect(shown["outline"] as? String == "solid 3px", "\(shown)")
        #expect(shown["status"] as? String == "app-2.0.bin (test-and-confirm): succeeded", "\(shown)")
        let rows = try #require(shown["rows"] as? [[String]])
        #expect(rows.first.map { Array($0.prefix(3)) } == ["0", "0", "2.0.0"], "\(rows)")
        #expect(try await bench.slotsBySmpclient().first == "0/0 2.0.0 active confirmed")
    }

    /// Light and dark follow the system preference, and in both the text, links, muted text and
    /// errors keep WCAG AA contrast (4.5:1) against the background.
    @Test(Peers.needed("playwright", "chromium"))
    func lightAndDarkFollowTheSystemWithReadableContrast() async throws {
        let bench = try await Bench.start(count: 0)
        defer { bench.stop() }
        let shown = try await bench.drive("appearance")
        let light = try #require(shown["light"] as? [String: String])
        let dark = try #require(shown["dark"] as? [String: String])
        #expect(light["background"] == "rgb(255, 255, 255)", "\(light)")
        #expect(dark["background"] == "rgb(22, 22, 22)", "\(dark)")
        for (scheme, colours) in [("light", light), ("dark", dark)] {
            let background = try #require(Self.rgb(colours["background"]))
            for part in ["text", "link", "muted", "error"] {
                let colour = try #require(Self.rgb(colours[part]), "\(scheme) \(part): \(colours)")
                let ratio = Self.contrast(colour, background)
                let pair = "\(colours[part] ?? "") on \(colours["background"] ?? "")"
                #expect(ratio >= 4.5, "\(scheme) \(part) \(pair): \(ratio)")
            }
        }
    }

    /// `rgb(r, g, b)` as CSS computes it.
    static func rgb(_ text: String?) -> [Double]? {
        guard let text, text.hasPrefix("rgb(") else { return nil }
        let parts = text.dropFirst(4).dropLast().split(separator: ",").compactMap {
            Double($0.trimmingCharacters(in: .whitespaces))
        }
        return parts.count == 3 ? parts : nil
    }

    /// WCAG 2's contrast ratio of two sRGB colours.
    static func contrast(_ a: [Double], _ b: [Double]) -> Double {
        func luminance(_ colour: [Double]) -> Double {
            let linear = colour.map { value -> Double in
                let c = value / 255
                return c <= 0.040_45 ? c / 12.92 : Foundation.pow((c + 0.055) / 1.055, 2.4)
            }
            return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]
        }
        let (x, y) = (luminance(a), luminance(b))
        return (max(x, y) + 0.05) / (min(x, y) + 0.05)
    }

    /// The Devices screen's live Bluetooth scan through BlueZ (bluezoo's mock): `mcumgr simulator
    /// --ble Zephyr` advertises on hci1, the page scans on hci0 and lists it with its address,
    /// signal and adapter, and its Connect button opens it over Bluetooth LE (the slots read).
    @Test(
        Peers.needed("playwright", "chromium"),
        .requiring(Bluezoo.available, Bluezoo.missing)
    )
    func aLiveBluetoothScanFindsTheDeviceAndConnects() async throws {
        let zoo = try await Bluezoo.start()
        defer { zoo.stop() }
        let simulator = try await BLECommandTests.simulator("Zephyr", zoo: zoo)
        defer { simulator.stop() }
        let bench = try await Bench.start(count: 0, environment: ["DBUS_SYSTEM_BUS_ADDRESS=\(zoo.bus.address)"])
        defer { bench.stop() }
        let shown = try await bench.drive("ble-scan", target: "hci0")
        #expect(shown["alert"] as? String == "", "\(shown)")
        let peripheral = try #require(Bluezoo.adapterAddresses.last)
        let rows = try #require(shown["rows"] as? [[String]])
        let row = try #require(rows.first { $0.first == "Zephyr" }, "\(rows)")
        #expect(row[1] == peripheral && row[3] == "hci0", "\(row)")
        #expect(shown["scanning"] as? Bool == true)
        #expect(shown["stopped"] as? Bool == true, "connecting ends the scan")
        #expect(shown["current"] as? String == "Device ble://\(peripheral)?adapter=hci0 — link connected", "\(shown)")
        let images = try #require(shown["images"] as? [[String]])
        #expect(images.first.map { Array($0.prefix(3)) } == ["0", "0", "1.0.0"], "\(images)")
    }

    /// `mcumgr ui --state postgres://…` watches a rollout that another process runs (as another
    /// host would, through the same database): the Fleet screen's kept rollout shows it as
    /// `mcumgr fleet status` prints it, until every device ended; smpclient finds the image on
    /// each device.
    @Test(
        Peers.needed("playwright", "smpclient", "chromium"),
        .requiring(TestPostgres.enabled, "no PostgreSQL: set MCUMGR_TEST_POSTGRES (scripts/postgres-test-server.sh)")
    )
    func theFleetScreenWatchesARolloutAnotherHostRuns() async throws {
        let database = try await TestPostgres.freshDatabase()
        // The page's server is up (it opened the state) before the other worker starts.
        let bench = try await Bench.start(count: 3, uiOptions: ["--state", database])
        defer { bench.stop() }
        let firmware = try bench.firmware(version: (2, 0), size: 256 * 1024)
        let inventory = bench.folder.appendingPathComponent("fleet.txt")
        try Data((bench.inventory + "\n").utf8).write(to: inventory)
        let worker = RunningProcess(
            try EntryTests.executable(),
            [
                "fleet", "upgrade", firmware, "--inventory", inventory.path, "--state", database, "--worker",
                "other-host", "--parallel", "1",
            ],
            timeout: .seconds(1_800)
        )
        defer { worker.stop() }
        let shown = try await bench.drive("kept")
        let status = try await worker.finished()
        #expect(status.status == 0, "\(status.stderr)")
        #expect(shown["alert"] as? String == "", "\(shown)")
        #expect(shown["watching"] as? Bool == true, "Stop watching turned the button back")
        #expect((shown["state"] as? String)?.hasPrefix("State: postgres://") == true, "\(shown)")
        let last = try #require(shown["last"] as? String).split(separator: "\n").map(String.init)
        #expect(last.first?.contains("app-2.0.bin (confirm-only, 2.0.0)") == true, "\(last)")
        let rows = last.filter { $0.hasPrefix("sim-") }
        #expect(rows.count == 3 && rows.allSatisfy { $0.contains(" upgraded ") }, "\(last)")
        #expect(last.last == "3 upgraded", "\(last)")
        // The state's rollouts to choose from: the last one run, and this one by its entry.
        let rollouts = try #require(shown["rollouts"] as? [String])
        #expect(rollouts.first == "the last one run", "\(rollouts)")
        #expect(
            rollouts.last?.hasPrefix("app-2.0.bin (confirm-only, 2.0.0): 3 upgraded; started ") == true,
            "\(rollouts)"
        )
        #expect((shown["chosen"] as? String)?.split(separator: "\n").last == "3 upgraded", "\(shown)")
        for line in bench.inventory.split(separator: "\n") {
            let url = String(line.split(separator: " ")[0])
            #expect(try await bench.slotsBySmpclient(url).first == "0/0 2.0.0 active confirmed", "\(url)")
        }
    }
}
