import MCUmgrConnect
import SMPLink
import SMPSerialTransport
import SMPUDPTransport
import Testing

/// URLs become the transports of their scheme, without the command line.
struct ConnectionURLTransportTests {
    @Test func udpAndSerialURLsMakeTheirTransports() throws {
        let udp = try ConnectionURL(parsing: "udp://[fe80::1%eth0]:1400").makeTransport()
        #expect((udp as? UDPTransport)?.port == 1400)
        #expect(udp.endpointDescription == "udp://[fe80::1%eth0]:1400")
        let serial = try ConnectionURL(parsing: "serial:///dev/ttyUSB0?baud=9600&framing=raw").makeTransport()
        #expect(serial.endpointDescription == "serial:///dev/ttyUSB0?baud=9600")
        #expect((serial as? SerialTransport)?.baudRate == 9600)
    }

    @Test func theSimulatorIsNotServedByTheLibrary() throws {
        #expect {
            _ = try ConnectionURL.simulator(options: [:]).makeTransport()
        } throws: { error in
            (error as? SMPTransportError)?.code == .unavailable
        }
    }
}
