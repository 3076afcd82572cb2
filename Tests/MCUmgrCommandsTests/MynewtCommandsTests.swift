import Foundation
import MCUmgrCommands
import Testing

/// `mcumgr log|crash|run`: Apache Mynewt groups. The simulated device is a Zephyr device, which
/// has none of them, so each must end saying the group is missing, with the device's code.
@Suite struct MynewtCommandsTests {
    @Test(arguments: [
        (["log", "show"], "log"), (["log", "list"], "log"), (["log", "clear"], "log"), (["log", "modules"], "log"),
        (["log", "levels"], "log"), (["crash", "div0"], "crash"), (["run", "list"], "run"),
        (["run", "test", "all"], "run"),
    ])
    func aZephyrDeviceRefusesThem(arguments: [String], group: String) async {
        let result = await CLI.sim(arguments: arguments)
        #expect(result.status == 1)
        #expect(result.stdout == "")
        #expect(
            result.stderr
                == "error: the device has no \(group) group, or not this command of it (device error 8 ENOTSUP)\n"
        )
    }

    @Test func helpListsTheVerbs() async {
        let result = await CLI.run(["log", "--help"])
        #expect(result.status == 0)
        for verb in ["show", "clear", "list", "modules", "levels"] { #expect(result.stdout.contains("  \(verb) ")) }
    }
}
