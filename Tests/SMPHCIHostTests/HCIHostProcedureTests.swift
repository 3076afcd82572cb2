import SMPHCI
import SMPTestSupport
import Testing

@testable import SMPHCIHost

/// Advertising and a cancelled scan on the fake: the commands go out, a central's connection
/// ends advertising, a refusal is a clear error, and a cancelled procedure leaves the
/// controller as it found it.
@Suite(.timeLimit(.minutes(5)))
struct HCIHostProcedureTests {
    static let central = BluetoothAddress("D0:00:00:00:00:07") ?? .zero

    @Test func advertisingEndsWithACentralsConnection() async throws {
        let fake = try FakeController()
        defer { fake.stop() }
        let host = try await HCIHostBringUpTests.open(fake)
        let advertising = Task { try await host.advertise(name: "fake-periph", service: .smpService) }
        let enable = try await fake.command(.leSetAdvertisingEnable)
        #expect(enable?.parameters == [0x01])
        let complete = HCI.LEConnectionComplete(
            status: .success,
            connectionHandle: 0x0041,
            role: .peripheral,
            peerAddressType: .randomDevice,
            peerAddress: Self.central,
            connectionInterval: 24,
            peripheralLatency: 0,
            supervisionTimeout: 400,
            centralClockAccuracy: 0
        )
        fake.send(complete.packet)
        let connection = try await advertising.value
        #expect(connection.role == .peripheral)
        #expect(connection.peer == Self.central)
        #expect(connection.handle == 0x0041)
        await host.close()
    }

    @Test func aRefusedAdvertisingCommandIsACommandFailure() async throws {
        let fake = try FakeController()
        defer { fake.stop() }
        fake.answer(.leSetAdvertisingData, with: .complete([HCIStatus.invalidCommandParameters.rawValue]))
        let host = try await HCIHostBringUpTests.open(fake)
        let error = await #expect(throws: HCIError.self) {
            _ = try await host.advertise(name: "fake-periph", service: .smpService)
        }
        #expect(error?.code == .commandFailed)
        #expect(error?.status == .invalidCommandParameters)
        // The host goes on: the next procedure runs.
        fake.answer(.leSetAdvertisingData, with: .complete([0]))
        let seen = try await host.scan(for: .milliseconds(100))
        #expect(seen.isEmpty)
        await host.close()
    }

    /// A scan cancelled while it runs turns scanning off: a controller left scanning would
    /// flood the next host with reports.
    @Test func aCancelledScanTurnsScanningOff() async throws {
        let fake = try FakeController()
        defer { fake.stop() }
        let host = try await HCIHostBringUpTests.open(fake)
        let scanning = Task { try await host.scan(for: .seconds(3600)) }
        let enable = try await fake.command(.leSetScanEnable)
        #expect(enable?.parameters.first == 0x01)
        scanning.cancel()
        await #expect(throws: CancellationError.self) { _ = try await scanning.value }
        let disable = try await fake.command(.leSetScanEnable)
        #expect(disable?.parameters.first == 0x00)
        await host.close()
    }
}

/// Cancelled while the enable is in flight (the controller has not answered yet): the disable
/// follows it, so the controller ends up off (found here: the host sent nothing).
@Suite(.timeLimit(.minutes(5)))
struct HCIHostCancelInFlightTests {
    @Test(arguments: [HCIOpcode.leSetScanEnable, .leSetAdvertisingEnable])
    func aProcedureCancelledWhileItsEnableIsInFlightTurnsItOff(_ opcode: HCIOpcode) async throws {
        let fake = try FakeController()
        defer { fake.stop() }
        fake.answer(opcode, with: .silence)
        let host = try await HCIHostBringUpTests.open(fake)
        let procedure = Task {
            if opcode == .leSetScanEnable {
                _ = try await host.scan(for: .seconds(3600))
            } else {
                _ = try await host.advertise(name: "fake-periph", service: .smpService)
            }
        }
        let enable = try await fake.command(opcode)
        #expect(enable?.parameters.first == 0x01)
        procedure.cancel()
        await #expect(throws: CancellationError.self) { try await procedure.value }
        // The controller answers the enable late; the disable goes out with that credit.
        fake.send(HCI.CommandComplete(numHCICommandPackets: 1, opcode: opcode, returnParameters: [0]).packet)
        let disable = try await fake.command(opcode)
        #expect(disable?.parameters.first == 0x00)
        await host.close()
    }
}
