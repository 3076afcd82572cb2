import Foundation
import MCUmgrCommands
import Testing

/// `mcumgr os …` against the simulated device.
@Suite struct OSCommandTests {
    @Test func echoPrintsTheAnswer() async {
        let result = await CLI.sim("os", "echo", "hello there")
        #expect(result.status == 0)
        #expect(result.stdout == "hello there\n")
        #expect(result.stderr == "")
    }

    @Test func echoWithGlobalOptionsFirstAndJSON() async throws {
        let result = await CLI.run(["--json", "--conn", "sim://", "os", "echo", "hi"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == #"{"r":"hi"}"# + "\n")
    }

    /// A dead device: `os echo` with `--timeout 1 --retries 1` sends its request twice (a small
    /// request does not read the device's parameters first) and ends with the link status. Bound
    /// by what crossed the link, not by the clock: a ladder of probes or more attempts would show
    /// as more datagrams.
    @Test func aSilentDeviceEndsAfterTheAttemptsTheOptionsAllow() async throws {
        let silent = try SilentDevice()
        let result = await CLI.run(["--conn", silent.url, "--timeout", "1", "--retries", "1", "os", "echo", "hi"])
        #expect(result.status == 2)
        #expect(result.stderr.hasPrefix("error: no answer to os command 0 (Echo) after 2 attempts of 1.0 seconds"))
        #expect(CLI.lines(result.stderr).count == 1)
        // Two attempts, no more: what the options promise.
        #expect(try silent.datagrams() == 2)
    }

    /// A closed UDP port answers ICMP port unreachable: refused with the link status and the
    /// refusal's words — a wait for the (hour-long) timeout would end with other words, and
    /// only after the test's time limit.
    @Test(.timeLimit(.minutes(5))) func aClosedPortIsRefusedAtOnce() async throws {
        let url = try closedUDPPort()
        let result = await CLI.run(["--conn", url, "--timeout", "3600", "--retries", "0", "os", "echo", "hi"])
        #expect(result.status == 2)
        #expect(result.stderr.hasPrefix("error: connection refused: nothing listens at \(url)"))
    }

    @Test func paramsShowsBufferSizeAndCount() async throws {
        let result = await CLI.run(["os", "params", "--conn", "sim://?buf_size=384&buf_count=2"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "buf_size   384\nbuf_count  2\n")
        let json = await CLI.run(["os", "params", "--json", "--conn", "sim://?buf_size=384&buf_count=2"])
        #expect(json.stdout == #"{"buf_size":384,"buf_count":2}"# + "\n")
    }

    @Test func infoPassesTheFormat() async throws {
        let kernel = await CLI.sim("os", "info")
        #expect(kernel.status == 0)
        #expect(kernel.stdout == "Zephyr\n")
        let all = await CLI.sim("os", "info", "--format", "a", "--json")
        #expect(all.status == 0)
        let output = try #require(try CLI.json(all.stdout)["output"] as? String)
        #expect(output.hasPrefix("Zephyr zephyr "))
    }

    @Test func infoRejectsUnknownLetters() async {
        let result = await CLI.sim("os", "info", "--format", "xyz")
        #expect(result.status == 64)
        #expect(result.stdout == "")
        #expect(result.stderr == "error: --format takes letters from snrvbmpioa, e.g. --format a\n")
    }

    @Test func bootloaderNameAndMode() async throws {
        let name = await CLI.sim("os", "bootloader")
        #expect(name.stdout == "MCUboot\n")
        let mode = await CLI.sim("os", "bootloader", "--query", "mode")
        #expect(mode.stdout == "mode 3 (swap using move)\n")
        let json = await CLI.run(["os", "bootloader", "--query", "mode", "--json", "--conn", "sim://?mode=overwrite"])
        #expect(try CLI.json(json.stdout)["mode"] as? Int == 2)
    }

    @Test func anUnknownBootloaderQueryIsTheDevicesRefusal() async {
        let result = await CLI.sim("os", "bootloader", "--query", "colour")
        #expect(result.status == 1)
        #expect(result.stdout == "")
        #expect(result.stderr == "error: the device refused: os error 3 QUERY_YIELDS_NO_ANSWER\n")
    }

    @Test func taskstatIsATable() async throws {
        let result = await CLI.sim("os", "taskstat")
        #expect(result.status == 0)
        let lines = CLI.lines(result.stdout)
        #expect(lines.first == "task      prio  tid  state  stkuse  stksiz  cswcnt  runtime")
        #expect(lines.contains { $0.hasPrefix("main         0    1      0 ") })
        let json = try CLI.json(await CLI.sim("os", "taskstat", "--json").stdout)
        let main = try #require((json["tasks"] as? [String: Any])?["main"] as? [String: Any])
        #expect(main["prio"] as? Int == 0)
        #expect(main["stksiz"] as? Int == 512)
    }

    @Test func mpstatIsATable() async throws {
        let result = await CLI.sim("os", "mpstat")
        #expect(result.status == 0)
        #expect(CLI.lines(result.stdout).first == "pool          blksiz  nblks  nfree    min")
        let json = try CLI.json(await CLI.sim("os", "mpstat", "--json").stdout)
        #expect((json["mpools"] as? [String: Any])?["_system_heap"] != nil)
    }

    @Test func datetimeReadsAndSets() async throws {
        let read = await CLI.sim("os", "datetime")
        #expect(read.status == 0)
        #expect(read.stdout.range(of: #"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}"#, options: .regularExpression) != nil)
        let get = await CLI.sim("os", "datetime", "get", "--json")
        #expect(try CLI.json(get.stdout)["datetime"] is String)

        let device = SimDevice()
        let set = await CLI.sim("os", "datetime", "set", "2030-01-02T03:04:05", device: device)
        #expect(set.status == 0, "\(set.stderr)")
        #expect(set.stdout == "set the device's clock to 2030-01-02T03:04:05\n")
        let now = await CLI.sim("os", "datetime", "set", "now", "--json")
        #expect(now.status == 0, "\(now.stderr)")
    }

    @Test func datetimeRejectsWhatIsNotADate() async {
        let result = await CLI.sim("os", "datetime", "set", "tomorrow")
        #expect(result.status == 64)
        #expect(result.stderr == "error: 'tomorrow' is not a date and time like 2026-11-22T16:00:00 (or 'now')\n")
    }

    @Test func resetAnswersBeforeResetting() async throws {
        let result = await CLI.sim("os", "reset")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "the device is resetting\n")
        let bootloader = await CLI.sim("os", "reset", "--boot-mode", "1", "--json")
        #expect(bootloader.status == 0, "\(bootloader.stderr)")
        #expect(bootloader.stdout == "{}\n")
        let forced = await CLI.sim("os", "reset", "--force")
        #expect(forced.status == 0, "\(forced.stderr)")
    }
}
