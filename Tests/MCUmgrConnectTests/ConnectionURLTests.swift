import MCUmgrConnect
import SMPHCIHost
import Testing

struct ConnectionURLTests {
    @Test(
        arguments: [
            ("udp://127.0.0.1", ConnectionURL.udp(host: "127.0.0.1", port: 1337)),
            ("udp://192.168.1.10:1338", .udp(host: "192.168.1.10", port: 1338)),
            ("UDP://device.local:9/", .udp(host: "device.local", port: 9)),
            ("udp://[::1]:1337", .udp(host: "::1", port: 1337)),
            ("udp://[fe80::1%eth0]", .udp(host: "fe80::1%eth0", port: 1337)),
            ("udp://::1", .udp(host: "::1", port: 1337)),
            ("udp://[::ffff:10.0.0.1]:5", .udp(host: "::ffff:10.0.0.1", port: 5)),
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
            ("ble://Zephyr%20DFU", .ble(name: "Zephyr DFU")),
            ("ble://kit?psm=128", .ble(name: "kit", psm: 128)),
            ("ble://C0:FF:EE:00:00:01?adapter=hci1", .ble(name: "C0:FF:EE:00:00:01", adapter: "hci1")),
            ("ble://kit?pair=1&ADAPTER=hci0", .ble(name: "kit", adapter: "hci0", pair: true)),
            ("ble://kit?pair=0", .ble(name: "kit")),
            ("sim://", .simulator(options: [:])),
            ("sim://?images=2&mode=direct-xip", .simulator(options: ["images": "2", "mode": "direct-xip"])),
            ("sim://?state_dir=/tmp/a%20b", .simulator(options: ["state_dir": "/tmp/a b"])),
        ] as [(String, ConnectionURL)]
    )
    func parses(_ text: String, _ expected: ConnectionURL) throws {
        #expect(try ConnectionURL(parsing: text) == expected)
    }

    @Test(arguments: [
        ("127.0.0.1:1337", "no scheme"),
        ("tcp://x", "unknown scheme"),
        ("udp://", "needs a host"),
        ("udp://:5", "needs a host"),
        ("udp://host:0", "port '0'"),
        ("udp://host:70000", "port '70000'"),
        ("udp://host:abc", "port 'abc'"),
        ("udp://host:", "port ''"),
        ("udp://[::1", "unclosed"),
        ("udp://[::1]5", "expected ':PORT'"),
        // Accepted before: a stray bracket made a "bare IPv6 address" that printed unparseable.
        ("udp://fe80::1]:5", "is not an IPv6 address"),
        ("udp://host]:5", "']' cannot appear in a host name; an IPv6 address goes in brackets"),
        ("udp://[host]:5", "'host' is not an IPv6 address"),
        ("udp://[fe80::1%]:5", "is not an IPv6 address"),
        ("udp://host/path", "takes no path"),
        ("udp://host?timeout=3", "unknown udp option timeout (it takes none)"),
        ("udp://my host", "contains a space"),
        ("serial://", "needs a device path"),
        ("serial:///", "needs a device path"),
        ("serial:///dev/tty?baud=fast", "baud 'fast'"),
        ("serial:///dev/tty?baud=0", "baud '0'"),
        ("serial:///dev/tty?framing=slip", "framing 'slip'"),
        ("serial:///dev/tty?parity=even", "unknown serial option parity (it takes baud, framing, mtu)"),
        ("serial:///dev/tty?mtu=2", "mtu '2'"),
        ("serial:///dev/tty?baud=9600&baud=115200", "gives option 'baud' twice"),
        ("ble://", "needs a device name"),
        ("ble://kit?psm=0", "psm '0'"),
        ("ble://kit?psm=x", "psm 'x'"),
        ("ble://kit?mtu=5", "unknown ble option mtu"),
        ("ble://kit?adapter=wlan0", "adapter 'wlan0'"),
        ("ble://kit?adapter=hci01", "adapter 'hci01'"),
        ("ble://kit?pair=maybe", "pair 'maybe'"),
        ("ble://a/b", "has no '/'"),
        ("ble://bad%zz", "broken percent escape"),
        ("sim://other", "takes options as a query"),
        ("sim://?a=%", "broken percent escape"),
        // Found by fuzzing: a pair with no name used to crash the parser.
        ("sim://?=", "a query option without a name ('=')"),
        ("udp://host?=5&a=1", "a query option without a name ('=5')"),
    ])
    func rejectsWithASpecificMessage(_ text: String, _ fragment: String) {
        do {
            let url = try ConnectionURL(parsing: text)
            Issue.record("'\(text)' parsed as \(url)")
        } catch {
            #expect(error.message.contains(fragment), "\(error.message)")
        }
    }

    /// What is printed parses back to the same value, for every scheme: inventories and profiles
    /// are written from it.
    @Test(arguments: [
        ConnectionURL.udp(host: "::1", port: 1337), .udp(host: "10.0.0.1", port: 9),
        .udp(host: "fe80::1%eth0", port: 5),
        .serial(path: "/dev/ttyACM0", baudRate: 115_200, raw: true, maximumFrameSize: 512),
        .ble(name: "Zephyr DFU & more?"), .ble(name: "C0:FF:EE:00:00:01", psm: 37, adapter: "hci2", pair: true),
        .ble(name: "100%/ünïcode"),
        .simulator(options: [:]), .simulator(options: ["state_dir": "/tmp/a b&c=d", "images": "2"]),
    ])
    func printsWhatParsesBack(_ url: ConnectionURL) throws {
        #expect(try ConnectionURL(parsing: url.description) == url, "\(url.description)")
    }

    @Test func printsTheUsualFormsUnchanged() throws {
        for text in [
            "udp://[::1]:1337", "udp://10.0.0.1:1337", "serial:///dev/ttyACM0?baud=115200&framing=raw",
            "sim://?images=2", "ble://C0:FF:EE:00:00:01?adapter=hci1", "ble://Zephyr%20DFU",
        ] {
            #expect(try ConnectionURL(parsing: text).description == text)
        }
    }
}

/// `ble://NAME?hci=…`: our own LE host on a controller, with a UART's rate and RTS/CTS.
struct ConnectionURLHCITests {
    @Test(
        arguments: [
            ("ble://kit?hci=tcp://127.0.0.1:6402", HCIControllerAddress.tcp(host: "127.0.0.1", port: 6402)),
            ("ble://kit?hci=tcp://[::1]:6402", .tcp(host: "[::1]", port: 6402)),
            ("ble://kit?hci=unix:///tmp/hci.sock", .unix(path: "/tmp/hci.sock")),
            ("ble://kit?hci=unix:///tmp/a%20b.sock", .unix(path: "/tmp/a b.sock")),
            (
                "ble://kit?hci=/dev/ttyACM0",
                .serial(path: "/dev/ttyACM0", baudRate: 1_000_000, hardwareFlowControl: true)
            ),
            (
                "ble://kit?hci=/dev/ttyACM0&baud=115200&rtscts=0",
                .serial(path: "/dev/ttyACM0", baudRate: 115_200, hardwareFlowControl: false)
            ),
            (
                "ble://kit?hci=serial:///dev/ttyUSB0&rtscts=yes",
                .serial(path: "/dev/ttyUSB0", baudRate: 1_000_000, hardwareFlowControl: true)
            ),
        ] as [(String, HCIControllerAddress)]
    )
    func parses(_ text: String, _ controller: HCIControllerAddress) throws {
        #expect(try ConnectionURL(parsing: text) == .ble(name: "kit", hci: controller))
    }

    @Test(arguments: [
        ("ble://kit?hci=tcp://127.0.0.1:6402&adapter=hci0", "adapter, psm and pair are BlueZ's"),
        ("ble://kit?hci=tcp://127.0.0.1:6402&psm=128", "adapter, psm and pair are BlueZ's"),
        ("ble://kit?hci=tcp://127.0.0.1:6402&pair=1", "adapter, psm and pair are BlueZ's"),
        ("ble://kit?baud=115200", "baud and rtscts are for a UART controller (hci=/dev/…)"),
        ("ble://kit?rtscts=0", "baud and rtscts are for a UART controller"),
        ("ble://kit?hci=tcp://127.0.0.1:6402&rtscts=0", "rtscts is for a UART controller, not 'tcp://127.0.0.1:6402'"),
        ("ble://kit?hci=unix:///tmp/h.sock&rtscts=1", "rtscts is for a UART controller"),
        ("ble://kit?hci=tcp://127.0.0.1:6402&baud=9600", "a baud rate is for a serial controller"),
        ("ble://kit?hci=/dev/ttyACM0&baud=fast", "baud 'fast'"),
        ("ble://kit?hci=/dev/ttyACM0&baud=0", "baud '0'"),
        ("ble://kit?hci=/dev/ttyACM0&rtscts=maybe", "rtscts 'maybe' must be 1 or 0"),
        ("ble://kit?hci=tcp://host", "hci=tcp://host: 'tcp://host' needs a host and a port"),
        ("ble://kit?hci=hci0", "'hci0' is not a controller"),
        ("ble://kit?hci=tcp://h:1&hci=tcp://h:2", "gives option 'hci' twice"),
    ])
    func rejectsWithASpecificMessage(_ text: String, _ fragment: String) {
        do {
            let url = try ConnectionURL(parsing: text)
            Issue.record("'\(text)' parsed as \(url)")
        } catch {
            #expect(error.message.contains(fragment), "\(error.message)")
        }
    }

    @Test(arguments: [
        HCIControllerAddress.tcp(host: "127.0.0.1", port: 6402), .tcp(host: "[::1]", port: 1),
        .unix(path: "/tmp/a b&c.sock"),
        .serial(path: "/dev/ttyACM0", baudRate: 1_000_000, hardwareFlowControl: true),
        .serial(path: "/dev/ttyUSB0", baudRate: 115_200, hardwareFlowControl: false),
    ])
    func printsWhatParsesBack(_ controller: HCIControllerAddress) throws {
        let url = ConnectionURL.ble(name: "Zephyr DFU", hci: controller)
        #expect(try ConnectionURL(parsing: url.description) == url, "\(url.description)")
    }

    @Test func printsTheUsualFormsUnchanged() throws {
        for text in [
            "ble://kit?hci=tcp://127.0.0.1:6402", "ble://kit?hci=unix:///tmp/hci.sock",
            "ble://kit?hci=/dev/ttyACM0&baud=1000000", "ble://kit?hci=/dev/ttyACM0&baud=115200&rtscts=0",
        ] {
            #expect(try ConnectionURL(parsing: text).description == text)
        }
    }
}
