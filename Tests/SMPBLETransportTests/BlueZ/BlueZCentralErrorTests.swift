import Foundation
import SMPDBus
import SMPLink
import SMPSimulator
import SMPTestSupport
import Testing

@testable import SMPBLETransport

extension BlueZSuites {
    /// The errors people meet, each one line with what to try, and what the transport makes of them.
    @Suite(.serialized, .requiring(Bluezoo.available, Bluezoo.missing))
    struct BlueZCentralErrorTests {
        static func failure(_ options: BlueZCentral.Options) async -> BlueZError? {
            do {
                let link = try await BlueZCentral(options).connect()
                await link.disconnect()
                return nil
            } catch {
                return error
            }
        }

        @Test func blueZNotRunning() async throws {
            let bus = try await DBusTestBus.start()
            defer { bus.stop() }
            let error = try #require(
                await Self.failure(.init(target: "Zephyr", busAddress: try DBusAddress(bus.address)))
            )
            #expect(error.code == .notRunning)
            #expect(
                error.message
                    == "BlueZ (org.bluez) is not running on the system bus; start it with 'systemctl start bluetooth'"
            )
            #expect(error.transportError.code == .unavailable)
        }

        @Test func noSystemBus() async throws {
            let error = try #require(
                await Self.failure(.init(target: "Zephyr", busAddress: try DBusAddress("unix:path=/nonexistent/bus")))
            )
            #expect(error.code == .busUnavailable)
            #expect(error.message == "cannot reach the D-Bus at unix:path=/nonexistent/bus; is that bus running?")
        }

        /// The message names where the address came from, and blames the variable only when set.
        @Test(
            arguments: [
                (nil, [:], "cannot reach the system D-Bus at its default socket; is dbus running?"),
                (
                    nil, ["DBUS_SYSTEM_BUS_ADDRESS": ""],
                    "cannot reach the system D-Bus at its default socket; is dbus running?"
                ),
                (
                    nil, ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/x"],
                    "cannot reach the system D-Bus that DBUS_SYSTEM_BUS_ADDRESS names; is that bus running?"
                ),
                (
                    "unix:path=/y", ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/x"],
                    "cannot reach the D-Bus at unix:path=/y; is that bus running?"
                ),
            ] as [(String?, [String: String], String)]
        )
        func unreachableBusNamesItsSource(address: String?, environment: [String: String], message: String) throws {
            let parsed = try address.map { try DBusAddress($0) }
            #expect(BlueZCentral.unreachableBus(parsed, environment: environment) == message)
        }

        @Test func noAdapter() async throws {
            let zoo = try await Bluezoo.start(adapters: 0)
            defer { zoo.stop() }
            let error = try #require(await Self.failure(.init(target: "Zephyr", busAddress: try zoo.address)))
            #expect(error.code == .noAdapter)
            #expect(error.message.contains("no Bluetooth adapter"))
        }

        @Test func theAdapterAskedForIsMissing() async throws {
            let zoo = try await Bluezoo.start()
            defer { zoo.stop() }
            let error = try #require(
                await Self.failure(.init(target: "Zephyr", adapter: "hci7", busAddress: try zoo.address))
            )
            #expect(error.code == .noAdapter)
            #expect(error.message == "no Bluetooth adapter hci7; BlueZ has hci0, hci1")
        }

        @Test func adapterPoweredOff() async throws {
            let zoo = try await Bluezoo.start(powered: false)
            defer { zoo.stop() }
            let error = try #require(await Self.failure(.init(target: "Zephyr", busAddress: try zoo.address)))
            #expect(error.code == .adapterOff)
            #expect(error.message == "Bluetooth adapter hci0 is powered off; turn it on with 'bluetoothctl power on'")
        }

        @Test func notFoundWithinTheScanTimeout() async throws {
            let zoo = try await Bluezoo.start()
            defer { zoo.stop() }
            let options = BlueZCentral.Options(
                target: "Nobody",
                adapter: "hci0",
                scanTimeout: .seconds(2),
                busAddress: try zoo.address
            )
            let error = try #require(await Self.failure(options))
            #expect(error.code == .notFound)
            #expect(error.message.hasPrefix("no SMP device 'Nobody' found within 2 s on hci0"))
            #expect(error.transportError.code == .connectionFailed)
        }

        @Test func aPolicyDenialNamesTheGroup() async throws {
            let zoo = try await Bluezoo.start(denying: ["org.bluez"])
            defer { zoo.stop() }
            let error = try #require(await Self.failure(.init(target: "Zephyr", busAddress: try zoo.address)))
            #expect(error.code == .accessDenied)
            #expect(error.message.contains("'bluetooth' group"))
        }

        /// `?pair=1`: our agent (NoInputNoOutput) answers BlueZ and the device ends up paired.
        @Test func pairingWhenAsked() async throws {
            let scene = try await BlueZScene.start()
            do {
                var options = try scene.central()
                options.pair = true
                let link = try await BlueZCentral(options).connect()
                let bus = try await DBusConnection.connect(to: try scene.zoo.address)
                defer { bus.close() }
                let tree = try await BlueZ.managedObjects(bus)
                #expect(tree.devices(on: "/org/bluez/hci0").first { $0.address == link.address }?.paired == true)
                await link.disconnect()
            } catch {
                await scene.stop()
                throw error
            }
            await scene.stop()
        }

        /// `mcumgr ble scan`'s scanner finds the advertising peripheral by its SMP UUID.
        @Test func theScannerFindsTheSMPDevice() async throws {
            let scene = try await BlueZScene.start(name: "ScanMe")
            do {
                let found = try await BlueZScanner.scan(
                    adapter: "hci0",
                    timeout: .seconds(2),
                    busAddress: try scene.zoo.address
                )
                #expect(found.map(\.name) == ["ScanMe"])
                #expect(found.first?.address == Bluezoo.adapterAddresses[1])
                #expect(found.first?.adapter == "hci0")
            } catch {
                await scene.stop()
                throw error
            }
            await scene.stop()
        }
    }
}
