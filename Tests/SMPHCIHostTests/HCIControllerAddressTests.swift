import SMPHCIHost
import Testing

struct HCIControllerAddressTests {
    @Test(
        arguments: [
            ("tcp://127.0.0.1:6402", nil, true, HCIControllerAddress.tcp(host: "127.0.0.1", port: 6402)),
            ("tcp://localhost:1", nil, true, .tcp(host: "localhost", port: 1)),
            ("tcp://[::1]:65535", nil, true, .tcp(host: "[::1]", port: 65535)),
            ("unix:///tmp/hci.sock", nil, true, .unix(path: "/tmp/hci.sock")),
            ("/dev/ttyACM0", nil, true, .serial(path: "/dev/ttyACM0", baudRate: 1_000_000, hardwareFlowControl: true)),
            (
                "serial:///dev/ttyUSB1", 115_200, false,
                .serial(path: "/dev/ttyUSB1", baudRate: 115_200, hardwareFlowControl: false)
            ),
            (
                "/dev/ttyACM0", 460_800, true,
                .serial(path: "/dev/ttyACM0", baudRate: 460_800, hardwareFlowControl: true)
            ),
        ] as [(String, Int?, Bool, HCIControllerAddress)]
    )
    func parses(_ text: String, _ baud: Int?, _ flow: Bool, _ expected: HCIControllerAddress) throws {
        #expect(try HCIControllerAddress(parsing: text, baudRate: baud, hardwareFlowControl: flow) == expected)
    }

    @Test(
        arguments: [
            ("127.0.0.1:6402", nil, "is not a controller: use tcp://HOST:PORT, unix:///PATH or /dev/PATH (a UART)"),
            ("tcp://", nil, "needs a host and a port: tcp://127.0.0.1:6402"),
            ("tcp://host", nil, "needs a host and a port"),
            ("tcp://:5", nil, "needs a host and a port"),
            ("tcp://host:0", nil, "'0' in 'tcp://host:0' is not a port (1–65535)"),
            ("tcp://host:70000", nil, "'70000' in 'tcp://host:70000' is not a port"),
            ("tcp://host:", nil, "'' in 'tcp://host:' is not a port"),
            ("tcp://::1:5", nil, "an IPv6 host goes in brackets: tcp://[::1]:5"),
            ("unix://", nil, "needs an absolute socket path: unix:///tmp/hci.sock"),
            ("unix://tmp/x", nil, "needs an absolute socket path"),
            ("unix:///", nil, "needs an absolute socket path"),
            ("serial://", nil, "needs a device path: serial:///dev/ttyACM0"),
            ("serial://dev", nil, "needs a device path"),
            ("/", nil, "needs a device path"),
            ("/dev/ttyACM0", 0, "a baud rate must be positive, not 0"),
            ("/dev/ttyACM0", -9600, "a baud rate must be positive, not -9600"),
            ("tcp://host:5", 115_200, "a baud rate is for a serial controller, not 'tcp://host:5'"),
            ("unix:///tmp/hci.sock", 115_200, "a baud rate is for a serial controller"),
        ] as [(String, Int?, String)]
    )
    func rejectsWithASpecificMessage(_ text: String, _ baud: Int?, _ fragment: String) {
        #expect {
            _ = try HCIControllerAddress(parsing: text, baudRate: baud)
        } throws: { error in
            (error as? HCIAddressError)?.description.contains(fragment) == true
        }
    }

    /// `location` (with the rate and RTS/CTS given apart, as `ble://…?hci=` and `--hci` do)
    /// parses back to the same address.
    @Test(arguments: [
        HCIControllerAddress.tcp(host: "127.0.0.1", port: 6402), .tcp(host: "[fe80::1]", port: 9),
        .tcp(host: "hci.local", port: 1),
        .unix(path: "/tmp/a b/hci.sock"), .serial(path: "/dev/ttyACM0", baudRate: 1_000_000, hardwareFlowControl: true),
        .serial(path: "/dev/serial/by-id/usb-ZEPHYR", baudRate: 115_200, hardwareFlowControl: false),
    ])
    func locationParsesBack(_ address: HCIControllerAddress) throws {
        var baud: Int?
        var flow = true
        if case .serial(_, let rate, let rtscts) = address { (baud, flow) = (rate, rtscts) }
        #expect(
            try HCIControllerAddress(parsing: address.location, baudRate: baud, hardwareFlowControl: flow) == address
        )
    }

    @Test func descriptionsSayWhatTheyAre() {
        #expect(HCIControllerAddress.tcp(host: "127.0.0.1", port: 6402).description == "tcp://127.0.0.1:6402")
        #expect(HCIControllerAddress.unix(path: "/tmp/h").description == "unix:///tmp/h")
        #expect(
            HCIControllerAddress.serial(path: "/dev/ttyACM0", baudRate: 1_000_000, hardwareFlowControl: true)
                .description
                == "/dev/ttyACM0 at 1000000 baud"
        )
        #expect(
            HCIControllerAddress.serial(path: "/dev/ttyACM0", baudRate: 9600, hardwareFlowControl: false).description
                == "/dev/ttyACM0 at 9600 baud without RTS/CTS"
        )
        #expect(HCIControllerAddress.defaultBaudRate == 1_000_000)
    }
}
