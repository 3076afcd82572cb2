import Foundation
import MCUmgrCommands
import Testing

struct DecodeCommandTests {
    @Test func decodesAFrame() async {
        let result = await MCUmgrCommand.run(arguments: ["decode", "0a00000900000000a161646568656c6c6f"])
        #expect(result.status == 0)
        #expect(
            result.stdout == """
                header: SMP v2 write, group 0 (os), command 0, sequence 0, flags 0, length 9
                payload: {"d": "hello"}

                """
        )
    }

    @Test func jsonBeforeOrAfterTheSubcommandIsTheSame() async {
        let after = await MCUmgrCommand.run(arguments: ["decode", "0b00000700010101a1636f66661820", "--json"])
        let before = await MCUmgrCommand.run(arguments: ["--json", "decode", "0b00000700010101a1636f66661820"])
        #expect(after.stdout == before.stdout)
        #expect(
            after.stdout
                == #"{"header":{"version":2,"op":"write-response","flags":0,"length":7,"group":1,"group_name":"image","sequence":1,"command":1},"payload":{"off":32}}"#
                + "\n"
        )
    }

    @Test func showsTheErrorEnvelope() async {
        let result = await MCUmgrCommand.run(arguments: ["decode", "03 00 00 05 00 00 02 00 a1 62 72 63 08"])
        #expect(result.stdout.contains("status: device error 8 ENOTSUP (not supported)"))
    }

    @Test func decodesSeveralFramesBackToBack() async {
        let result = await MCUmgrCommand.run(arguments: [
            "decode", "0800000100010300a0", "0x0a,0x00,0x00,0x01,0x00,0x00,0x06,0x05,0xa0", "--json",
        ])
        #expect(result.stdout.split(separator: "\n").count == 2)
    }

    @Test func decodesConsoleSerialLines() async {
        let result = await MCUmgrCommand.run(arguments: [
            "decode", "060941424d4b4141414a41414141414b46685a47566f5a57787362364a2f0a",
        ])
        #expect(result.stdout.contains(#"payload: {"d": "hello"}"#))
    }

    @Test func bareCBORIsShownInDiagnosticNotation() async {
        let result = await MCUmgrCommand.run(arguments: ["decode", "bf62726308ff"])
        #expect(result.stdout == "{\"rc\": 8}\n")
    }

    @Test(arguments: [
        (["decode", "zz"], "is not hex"),
        (["decode", "0a000009000000"], "neither an SMP frame"),
        (["decode", "0a00000900000000a1616465"], "neither an SMP frame"),
        (["decode", "0609 41422a44 0a"], "bad base64"),
        (["decode", "0609414141410a"], "impossible"),
    ])
    func badInputIsOneLineOnStderr(_ arguments: [String], _ fragment: String) async {
        let result = await MCUmgrCommand.run(arguments: arguments)
        #expect(result.status == 65)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.split(separator: "\n").count == 1)
        #expect(result.stderr.contains(fragment), "\(result.stderr)")
    }

    /// `decode -` reads the hex from standard input, line breaks and all (a capture file).
    @Test func readsStandardInput() async {
        let stdin = Data("0a00000900000000\na161646568656c6c6f\n".utf8)
        let result = await CLI.run(["decode", "-"], stdin: stdin)
        #expect(result.status == 0, "\(result.stderr)")
        let direct = await CLI.run(["decode", "0a00000900000000a161646568656c6c6f"])
        #expect(result.stdout == direct.stdout)
        #expect(result.stdout.contains(#"payload: {"d": "hello"}"#))
    }

    /// What cannot be decoded is bad input data (65), from the arguments as from stdin.
    @Test(arguments: [
        ("", "error: standard input is empty\n"),
        ("zz\n", "error: standard input is not hex: use pairs of digits 0-9 a-f\n"),
    ])
    func badStandardInputIsBadData(_ stdin: String, _ message: String) async {
        let result = await CLI.run(["decode", "-"], stdin: Data(stdin.utf8))
        #expect(result.status == 65)
        #expect(result.stdout == "")
        #expect(result.stderr == message)
    }
}
