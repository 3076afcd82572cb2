import MCUmgrCommands
import Testing

struct ConnectionURLTests {
    @Test(
        arguments: [
            ("udp://127.0.0.1", ConnectionURL.udp(host: "127.0.0.1", port: 1337)),
            ("udp://192.168.1.10:1338", .udp(host: "192.168.1.10", port: 1338)),
            ("UDP://device.local:9", .udp(host: "device.local", port: 9)),
            ("udp://[::1]:1337", .udp(host: "::1", port: 1337)),
            ("udp://[fe80::1%eth0]", .udp(host: "fe80::1%eth0", port: 1337)),
            ("udp://::1", .udp(host: "::1", port: 1337)),
            (
                "serial:///dev/ttyACM0",
                .serial(path: "/dev/ttyACM0", baudRate: 115_200, raw: false, maximumFrameSize: nil)
            ),
            (
                "serial:///dev/ttyUSB1?baud=1000000&framing=raw",
                .serial(path: "/dev/ttyUSB1", baudRate: 1_000_000, raw: true, maximumFrameSize: nil)
            ),
            (
                "serial:///dev/pts/3?framing=console&mtu=1024",
                .serial(path: "/dev/pts/3", baudRate: 115_200, raw: false, maximumFrameSize: 1024)
            ),
            ("ble://Zephyr%20DFU", .ble(name: "Zephyr DFU", psm: nil)),
            ("ble://kit?psm=128", .ble(name: "kit", psm: 128)),
            ("sim://", .simulator(options: [:])),
            ("sim://?images=2&mode=direct-xip", .simulator(options: ["images": "2", "mode": "direct-xip"])),
        ] as [(String, ConnectionURL)]
    )
    func parses(_ text: String, _ expected: ConnectionURL) throws {
        #expect(try ConnectionURL(parsing: text) == expected)
    }

    @Test(arguments: [
        ("127.0.0.1:1337", "no scheme"),
        ("tcp://x", "unknown scheme"),
        ("udp://", "needs a host"),
        ("udp://host:0", "port '0'"),
        ("udp://host:70000", "port '70000'"),
        ("udp://host:abc", "port 'abc'"),
        ("udp://[::1", "unclosed"),
        ("serial://", "needs a device path"),
        ("serial:///dev/tty?baud=fast", "baud 'fast'"),
        ("serial:///dev/tty?framing=slip", "framing 'slip'"),
        ("serial:///dev/tty?parity=even", "unknown serial option"),
        ("serial:///dev/tty?mtu=2", "mtu '2'"),
        ("ble://", "needs a device name"),
        ("ble://kit?psm=0", "psm '0'"),
        ("ble://kit?psm=x", "psm 'x'"),
        ("ble://kit?mtu=5", "unknown ble option"),
        ("sim://other", "takes options as a query"),
        // Found by fuzzing: a pair with no name used to crash the parser.
        ("sim://?=", "a query option without a name ('=')"),
        ("udp://host?=5&a=1", "a query option without a name ('=5')"),
    ])
    func rejectsWithASpecificMessage(_ text: String, _ fragment: String) {
        do {
            _ = try ConnectionURL(parsing: text)
            Issue.record("'\(text)' parsed")
        } catch {
            #expect(error.message.contains(fragment), "\(error.message)")
        }
    }

    @Test func descriptionRoundTrips() throws {
        for text in [
            "udp://[::1]:1337", "udp://10.0.0.1:1337", "serial:///dev/ttyACM0?baud=115200&framing=raw",
            "sim://?images=2",
        ] {
            #expect(try ConnectionURL(parsing: text).description == text)
        }
    }
}
