import Foundation
import SMPHCI
import SMPPOSIX
import SMPTestSupport
import Testing

@testable import SMPHCIHost

/// The host's bring-up against the fake controller: the whole sequence over TCP and a Unix
/// socket, whole or drip-fed.
@Suite(.timeLimit(.minutes(5)))
struct HCIHostBringUpTests {
    /// Opens a host on the fake with a command timeout no loaded machine reaches.
    static func open(_ fake: FakeController, commandTimeout: Duration = .seconds(60)) async throws -> HCIHost {
        try await HCIHost.open(fake.address, randomAddress: randomAddress, commandTimeout: commandTimeout)
    }

    static let randomAddress = BluetoothAddress("C3:00:00:00:00:01") ?? .zero

    @Test(arguments: [false, true])
    func bringsTheControllerUpInTheSpecifiedOrder(unix: Bool) async throws {
        let fake = try FakeController(unix: unix)
        defer { fake.stop() }
        let host = try await Self.open(fake)
        #expect(
            fake.received.compactMap(\.command?.opcode) == [
                .reset, .readLocalVersionInformation, .readLocalSupportedCommands, .readBDADDR, .setEventMask,
                .leSetEventMask, .leReadBufferSizeV2, .leSetRandomAddress,
            ]
        )
        #expect(host.controller.publicAddress == FakeControllerState.publicAddress)
        #expect(host.controller.randomAddress == Self.randomAddress)
        #expect(host.controller.aclDataPacketLength == Int(FakeControllerState.aclLength))
        #expect(host.controller.aclDataPacketCount == Int(FakeControllerState.aclCount))
        #expect(host.commandTimeout == .seconds(60))
        #expect(await host.isUsable)
        await host.close()
    }

    @Test func theCommandTimeoutDefaultsToTenSeconds() async throws {
        let fake = try FakeController()
        defer { fake.stop() }
        let host = try await HCIHost.open(fake.address)
        #expect(host.commandTimeout == HCIHost.defaultCommandTimeout)
        #expect(HCIHost.defaultCommandTimeout == .seconds(10))
        await host.close()
    }

    /// Every event cut into bytes or random pieces: the host learns the same controller.
    @Test(arguments: [FakeDelivery.byteByByte, .randomSplits(seed: 1), .randomSplits(seed: 0xC0FFEE)])
    func aDripFedBringUpLearnsTheSame(_ delivery: FakeDelivery) async throws {
        let whole = try FakeController()
        defer { whole.stop() }
        let reference = try await Self.open(whole)
        await reference.close()
        let dripping = try FakeController(delivery: delivery)
        defer { dripping.stop() }
        let host = try await Self.open(dripping)
        #expect(host.controller == reference.controller)
        await host.close()
    }

    @Test func anAbsentControllerIsASystemCallErrorNamingIt() async throws {
        let path = "/tmp/no-hci-controller-\(UInt32.random(in: 0...UInt32.max)).sock"
        let error = await #expect(throws: SystemCallError.self) { _ = try await HCIHost.open(.unix(path: path)) }
        #expect(error?.subject == path)
        #expect(error?.code == ENOENT)
    }
}
