import Foundation
import SMPHCI
import SMPPOSIX
import SMPTestSupport
import Testing

@testable import SMPHCIHost

/// A controller on a UART: the host opens a tty (a pseudo-terminal's slave, set raw at
/// 1,000,000 baud with RTS/CTS as for Zephyr's `hci_uart`), and the pseudo-terminal's master is
/// bridged byte for byte to the fake controller — the same H4 as over a socket, through the
/// serial channel's own reads and writes.
@Suite(.timeLimit(.minutes(5)))
struct HCIByteChannelTests {
    static let peer = FakePeer(name: "fake-smp")

    /// Copies bytes both ways between the pseudo-terminal's master and the fake's socket until
    /// either side ends.
    final class Bridge: Sendable {
        let terminal: PseudoTerminal
        let socket: StreamSocket

        init(to fake: FakeController) throws {
            guard case .tcp(let host, let port) = fake.address else { throw FakeControllerError("a TCP fake") }
            terminal = try PseudoTerminal()
            socket = try StreamSocket(connectingTo: host, port: port)
            let (terminal, socket) = (terminal, socket)
            BlockingReadLoop.start(name: "bridge-to-fake") {
                guard !terminal.isClosed, let bytes = try? terminal.read(timeout: .milliseconds(100)) else {
                    socket.close()
                    return false
                }
                guard !bytes.isEmpty else { return true }
                return (try? socket.write(bytes)) != nil
            }
            BlockingReadLoop.start(name: "bridge-to-host") {
                guard let bytes = try? socket.read(timeout: .milliseconds(100)) else {
                    terminal.close()
                    return false
                }
                guard !bytes.isEmpty else { return true }
                return (try? terminal.write(bytes, timeout: .seconds(60))) != nil
            }
        }

        func stop() {
            terminal.close()
            socket.close()
        }
    }

    @Test func aHostOnAUARTBringsItUpAndScans() async throws {
        let fake = try FakeController(peer: Self.peer)
        defer { fake.stop() }
        let bridge = try Bridge(to: fake)
        defer { bridge.stop() }
        let uart = try HCIControllerAddress(parsing: bridge.terminal.slavePath)
        #expect(uart == .serial(path: bridge.terminal.slavePath, baudRate: 1_000_000, hardwareFlowControl: true))
        let host = try await HCIHost.open(
            uart,
            randomAddress: BluetoothAddress("C3:00:00:00:00:02"),
            commandTimeout: .seconds(60)
        )
        #expect(host.controller.aclDataPacketCount == Int(FakeControllerState.aclCount))
        let seen = try await host.scan(for: .seconds(60)) { $0.localName == "fake-smp" }
        #expect(seen.contains { $0.localName == "fake-smp" })
        await host.close()
    }

    /// A serial channel closed here reads as ended (a UART has no end of stream of its own).
    @Test func aClosedSerialChannelReadsAsEnded() throws {
        let terminal = try PseudoTerminal()
        defer { terminal.close() }
        let channel = SerialByteChannel(port: try SerialPort(path: terminal.slavePath, baudRate: nil))
        #expect(try channel.read(timeout: .milliseconds(1)) == [])
        channel.close()
        #expect(try channel.read(timeout: .milliseconds(1)) == nil)
    }
}
