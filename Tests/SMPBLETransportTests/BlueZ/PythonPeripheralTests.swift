import Foundation
import MCUmgr
import MCUmgrDFU
import SMPCore
import SMPDBus
import SMPPOSIX
import SMPSimulator
import SMPTestSupport
import Testing

@testable import SMPBLETransport

extension BlueZSuites {
    /// An independent peripheral — a GATT server written here with dbus-python (Debian's
    /// python3-dbus, the reference binding over libdbus) — forwards SMP frames between bluezoo and
    /// our UDP simulator; our central upgrades the device behind it.
    ///
    /// The peripheral knows nothing of the device's resets (it only forwards frames), so bluezoo
    /// would show no link drop; the test support restarts bluezoo when the device reboots, and the
    /// peripheral registers again when `org.bluez` comes back, as a BlueZ application must.
    @Suite(
        .serialized,
        .requiring(Bluezoo.available, Bluezoo.missing),
        .enabled(
            if: Peers.isCI || DBusConnectionPythonCheck.hasDBusPython,
            "needs Debian's python3-dbus and python3-gi"
        )
    )
    struct PythonPeripheralTests {
        static let script = """
            import socket, sys
            import dbus, dbus.service, dbus.mainloop.glib
            from gi.repository import GLib

            dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
            bus = dbus.bus.BusConnection(sys.argv[1])
            udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            target = ("127.0.0.1", int(sys.argv[2]))
            NAME, MTU = sys.argv[3], int(sys.argv[4])
            SMP_SERVICE = "8d53dc1d-1db7-4cd3-868b-8a527460aa84"
            SMP_CHARACTERISTIC = "da2e7828-fbce-4e01-ae9e-261174997c48"
            PROPERTIES = "org.freedesktop.DBus.Properties"
            ROOT, SERVICE, CHAR, ADV = "/peer", "/peer/service0", "/peer/service0/char0", "/peer/advertisement0"

            class Thing(dbus.service.Object):
                def __init__(self, path, interface, properties):
                    super().__init__(bus, path)
                    self.interface, self.properties = interface, properties
                @dbus.service.method(PROPERTIES, in_signature="s", out_signature="a{sv}")
                def GetAll(self, interface):
                    return self.properties if interface == self.interface else {}
                @dbus.service.method(PROPERTIES, in_signature="ss", out_signature="v")
                def Get(self, interface, name):
                    return self.properties[name]
                @dbus.service.signal(PROPERTIES, signature="sa{sv}as")
                def PropertiesChanged(self, interface, changed, invalidated):
                    pass

            class Characteristic(Thing):
                def __init__(self):
                    super().__init__(CHAR, "org.bluez.GattCharacteristic1", {
                        "UUID": SMP_CHARACTERISTIC, "Service": dbus.ObjectPath(SERVICE),
                        "Flags": dbus.Array(["write-without-response", "notify"], signature="s"),
                        "Notifying": dbus.Boolean(False), "MTU": dbus.UInt16(MTU)})
                    self.pending, self.mtu = bytearray(), MTU
                @dbus.service.method("org.bluez.GattCharacteristic1", in_signature="aya{sv}")
                def WriteValue(self, value, options):
                    self.mtu = int(options.get("mtu", self.mtu))
                    self.pending += bytes(value)
                    # SMP over GATT: a frame is its 8-byte header plus the length it announces.
                    while len(self.pending) >= 8:
                        length = 8 + int.from_bytes(self.pending[2:4], "big")
                        if len(self.pending) < length:
                            break
                        udp.sendto(bytes(self.pending[:length]), target)
                        del self.pending[:length]
                @dbus.service.method("org.bluez.GattCharacteristic1")
                def StartNotify(self):
                    self.properties["Notifying"] = dbus.Boolean(True)
                @dbus.service.method("org.bluez.GattCharacteristic1")
                def StopNotify(self):
                    self.properties["Notifying"] = dbus.Boolean(False)
                def notify(self, frame):
                    if not self.properties["Notifying"]:
                        return
                    size = min(512, self.mtu - 3)
                    for start in range(0, len(frame), size):
                        value = dbus.Array(frame[start:start + size], signature="y")
                        self.PropertiesChanged("org.bluez.GattCharacteristic1", {"Value": value}, [])

            class Application(dbus.service.Object):
                @dbus.service.method("org.freedesktop.DBus.ObjectManager", out_signature="a{oa{sa{sv}}}")
                def GetManagedObjects(self):
                    return {dbus.ObjectPath(o.__dbus_object_path__): {o.interface: o.properties} for o in (service, char)}

            class Advertisement(Thing):
                @dbus.service.method("org.bluez.LEAdvertisement1")
                def Release(self):
                    pass

            app = Application(bus, ROOT)
            service = Thing(SERVICE, "org.bluez.GattService1", {"UUID": SMP_SERVICE, "Primary": dbus.Boolean(True)})
            char = Characteristic()
            adv = Advertisement(ADV, "org.bluez.LEAdvertisement1", {
                "Type": "peripheral", "ServiceUUIDs": dbus.Array([SMP_SERVICE], signature="s"),
                "LocalName": NAME, "Discoverable": dbus.Boolean(True)})

            def received(source, condition):
                char.notify(udp.recv(4096))
                return True
            GLib.io_add_watch(udp.fileno(), GLib.IO_IN, received)

            def register(attempt=0):
                adapter = bus.get_object("org.bluez", "/org/bluez/hci1")
                def failed(error):
                    if attempt < 100:
                        GLib.timeout_add(100, lambda: register(attempt + 1) and False)
                    else:
                        print("register failed", error, flush=True)
                def advertise():
                    adapter.RegisterAdvertisement(dbus.ObjectPath(ADV), {}, dbus_interface="org.bluez.LEAdvertisingManager1",
                        reply_handler=lambda: print("registered", flush=True), error_handler=failed)
                # Asynchronous: bluezoo calls GetManagedObjects back before it answers.
                adapter.RegisterApplication(dbus.ObjectPath(ROOT), {}, dbus_interface="org.bluez.GattManager1",
                    reply_handler=advertise, error_handler=failed)
                return False

            def owner_changed(name, old, new):
                if new:
                    char.properties["Notifying"] = dbus.Boolean(False)
                    char.pending.clear()
                    GLib.timeout_add(100, register)
            bus.add_signal_receiver(owner_changed, signal_name="NameOwnerChanged", dbus_interface="org.freedesktop.DBus",
                                    arg0="org.bluez")
            register()
            GLib.MainLoop().run()
            """

        /// Starts the Python peripheral for a UDP device and waits until it has registered.
        static func peripheral(zoo: Bluezoo, udpPort: UInt16, mtu: Int) async throws -> RunningProcess {
            let process = RunningProcess(
                "/usr/bin/nice",
                [
                    "-n", "10", "/usr/bin/env",
                    "DBUS_SYSTEM_BUS_ADDRESS=\(zoo.bus.address)", "/usr/bin/python3", "-c", script, zoo.bus.address,
                    String(udpPort), "PySMP", String(mtu),
                ],
                timeout: .seconds(600)
            )
            try await BlueZTesting.eventually("the Python peripheral registered") {
                process.output.stdout.contains("registered") || !process.output.stderr.isEmpty
            }
            guard process.output.stdout.contains("registered") else {
                process.stop()
                throw PeerError(message: "the Python peripheral failed: \(process.output.stderr)")
            }
            return process
        }

        @Test(arguments: [FirmwareUpgrade.Mode.testAndConfirm, .uploadOnly])
        func ourCentralUpgradesTheDeviceBehindIt(mode: FirmwareUpgrade.Mode) async throws {
            let zoo = try await Bluezoo.start()
            defer { zoo.stop() }
            // A buffer that fits one datagram (Zephyr's UDP transport receives at most its MTU, 1500).
            let device = SimulatedDevice(configuration: .init(bufferSize: 1024, bufferCount: 4))
            let server = try SimulatedUDPServer(device: device, host: "127.0.0.1", port: 0)
            server.start()
            let python = try await Self.peripheral(zoo: zoo, udpPort: server.localAddress.port, mtu: 247)
            defer { python.stop() }
            let restarter = Task {
                try await BlueZTesting.eventually("the device rebooted") { await device.bootCount >= 2 }
                try await zoo.restart()
            }
            defer { restarter.cancel() }
            let image = try BlueZTesting.image(size: 40 * 1024)
            let options = BlueZCentral.Options(
                target: "PySMP",
                adapter: "hci0",
                scanTimeout: .seconds(30),
                busAddress: try zoo.address
            )
            let completed = try await BlueZTesting.run(
                BlueZTesting.upgrade(GATTTransport.bluez(options), mode: mode),
                image.package
            )
            await server.stop()
            #expect(completed, "bluezoo: \(zoo.log.suffix(2000))\npython: \(python.output.stderr.suffix(2000))")
            let states = await device.imageStates
            if mode == .testAndConfirm {
                #expect(states.contains { $0.hash == image.hash && $0.isActive && $0.isConfirmed }, "\(states)")
            } else {
                #expect(states.contains { $0.hash == image.hash && $0.slot == 1 }, "\(states)")
            }
        }

        /// The write length follows the MTU the independent peripheral gives BlueZ.
        @Test(arguments: [23, 247, 512])
        func theWriteLengthFollowsItsMTU(mtu: Int) async throws {
            let zoo = try await Bluezoo.start()
            defer { zoo.stop() }
            // A buffer that fits one datagram (Zephyr's UDP transport receives at most its MTU, 1500).
            let device = SimulatedDevice(configuration: .init(bufferSize: 1024, bufferCount: 4))
            let server = try SimulatedUDPServer(device: device, host: "127.0.0.1", port: 0)
            server.start()
            let python = try await Self.peripheral(zoo: zoo, udpPort: server.localAddress.port, mtu: mtu)
            defer { python.stop() }
            let options = BlueZCentral.Options(
                target: "PySMP",
                adapter: "hci0",
                scanTimeout: .seconds(30),
                busAddress: try zoo.address
            )
            let link = try await BlueZCentral(options).connect()
            #expect(link.maximumWriteLength == min(512, mtu - 3))
            #expect(!link.writesThroughSocket && !link.notificationsThroughSocket)
            let client = try await SMPClient.connect(
                BlueZTesting.transport(over: link),
                configuration: BlueZTesting.client
            )
            let text = String(repeating: "z", count: 700)
            #expect(try await client.send(OSManagement.Echo(text: text)).text == text)
            await client.close()
            await server.stop()
        }
    }
}

/// Whether Debian's python3-dbus and python3-gi are there for /usr/bin/python3.
enum DBusConnectionPythonCheck {
    static let hasDBusPython: Bool = {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", "import dbus, dbus.mainloop.glib; from gi.repository import GLib"]
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        Peers.waitForExit(process)
        return process.terminationStatus == 0
    }()
}
