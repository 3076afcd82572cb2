import Foundation
import MCUboot
import MCUmgrConnect
import MCUmgrWeb
import SMPLink
import SMPSimulator
import SMPTestSupport
import Testing

@testable import MCUmgrCommands

/// `mcumgr ui`: its refusals before anything listens, and the words it hands the page (the
/// command line's own). Serving is tested in MCUmgrWebTests.
@Suite struct UICommandTests {
    @Test func aNonLoopbackAddressNeedsAllowRemote() async {
        let result = await CLI.run(["ui", "--listen", "0.0.0.0:8080"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("--allow-remote"), "\(result.stderr)")
    }

    @Test func aMalformedListenAddressIsAUsageError() async {
        let result = await CLI.run(["ui", "--listen", "127.0.0.1"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("--listen: '127.0.0.1' is not HOST:PORT"), "\(result.stderr)")
    }

    /// A state that cannot be used is said before anything listens (no URL printed).
    @Test func aStateThatCannotBeUsedIsRefusedBeforeServing() async {
        let result = await CLI.run(["ui", "--listen", "127.0.0.1:0", "--state", "/nonexistent/folder/fleet.sqlite"])
        #expect(result.status != 0)
        #expect(result.stdout == "")
        #expect(
            result.stderr.hasPrefix("error: /nonexistent/folder/fleet.sqlite: not a usable rollout state file"),
            "\(result.stderr)"
        )
    }

    @Test func aDatabasePasswordIsNotShownToThePage() {
        let shown = FleetStatusCommand.displayName("postgres://fleet:s3cret@db.example:5432/mcumgr")
        #expect(shown == "postgres://fleet@db.example:5432/mcumgr")
        #expect(
            FleetStatusCommand.displayName("postgres://fleet@db.example/mcumgr") == "postgres://fleet@db.example/mcumgr"
        )
        #expect(FleetStatusCommand.displayName("/var/lib/fleet.sqlite") == "/var/lib/fleet.sqlite")
    }

    /// A line about the state that reaches the page names the database without its password
    /// (the test server trusts local connections, so any password gets in).
    @Test(.requiring(TestPostgres.enabled, "no PostgreSQL: set MCUMGR_TEST_POSTGRES (scripts/postgres-test-server.sh)"))
    func aStateLineReachesThePageWithoutThePassword() async throws {
        var components = try #require(URLComponents(string: try await TestPostgres.freshDatabase()))
        components.password = "s3cret"
        let url = try #require(components.string)
        let state = try await UICommand.rolloutState(url)
        #expect(!state.name.contains("s3cret"))
        let error = await #expect(throws: (any Error).self) { try await state.status(nil) }
        let line = error.map { MCUmgrCommand.describe($0) } ?? ""
        #expect(line.hasSuffix("holds no rollout yet") && !line.contains("s3cret"), "\(line)")
    }

    @Test func clientOptionsAreRefused() async {
        let result = await CLI.run(["ui", "--conn", "sim://"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("'mcumgr ui' takes no --conn"), "\(result.stderr)")
    }

    @Test func thePageGetsTheCommandLinesWords() throws {
        let environment = UICommand.environment(timeout: 3)
        let timeout = SMPTransportError(.timeout, "no answer in 3 s")
        // The same words, but the option to raise is the server's.
        #expect(
            environment.describe(timeout)
                == "no answer in 3 s; check the connection and that the device runs an SMP server, "
                + "or raise mcumgr ui's --device-timeout"
        )
        #expect(MCUmgrCommand.describe(timeout).hasSuffix("or raise --timeout"))
        let bytes = FactoryImage.make(version: ImageVersion(major: 2, minor: 0, revision: 0))
        let package = try FirmwarePackage(data: Data(bytes), fileName: "app.bin")
        let reports = package.images.map { $0.mcuboot?.verify(publicKey: nil) }
        #expect(
            environment.packageLines(package, "app.bin")
                == ImageInfoCommand.text(package, reports: reports, file: "app.bin")
        )
        // `sim://` is served in-process, as for every other command.
        _ = try environment.connect(.simulator(options: [:]))
    }
}
