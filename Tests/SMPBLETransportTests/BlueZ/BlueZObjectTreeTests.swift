import SMPDBus
import SMPLink
import Testing

@testable import SMPBLETransport

/// BlueZ's objects found by their properties, never by path numbers; errors that mean pairing.
struct BlueZObjectTreeTests {
    static let device: DBusObjectPath = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF"

    static func object(_ path: DBusObjectPath, _ interfaces: [(String, [(String, DBusValue)])]) -> DBusDictionaryEntry {
        DBusDictionaryEntry(
            key: .objectPath(path),
            value: .dictionary(
                key: .string,
                value: .dictionary(key: .string, value: .variant),
                interfaces.map { DBusDictionaryEntry(key: .string($0.0), value: .options($0.1)) }
            )
        )
    }

    static func tree() throws -> BlueZObjectTree {
        let objects: [DBusDictionaryEntry] = [
            object(
                "/org/bluez/hci1",
                [("org.bluez.Adapter1", [("Address", .string("00:00:00:00:00:02")), ("Powered", .boolean(false))])]
            ),
            object(
                "/org/bluez/hci0",
                [("org.bluez.Adapter1", [("Address", .string("00:00:00:00:00:01")), ("Powered", .boolean(true))])]
            ),
            object(
                device,
                [
                    (
                        "org.bluez.Device1",
                        [
                            ("Address", .string("AA:BB:CC:DD:EE:FF")), ("Name", .string("Zephyr")),
                            ("Adapter", .objectPath("/org/bluez/hci0")),
                            ("UUIDs", .strings(["8d53dc1d-1db7-4cd3-868b-8a527460aa84"])), ("RSSI", .int16(-60)),
                        ]
                    )
                ]
            ),
            // A service with another UUID holding a characteristic with SMP's UUID: not it.
            object(
                "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF/service0001",
                [("org.bluez.GattService1", [("UUID", .string("0000180a-0000-1000-8000-00805f9b34fb"))])]
            ),
            object(
                "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF/service0001/char0002",
                [
                    (
                        "org.bluez.GattCharacteristic1",
                        [
                            ("UUID", .string("da2e7828-fbce-4e01-ae9e-261174997c48")),
                            ("Service", .objectPath("/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF/service0001")),
                        ]
                    )
                ]
            ),
            object(
                "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF/service0020",
                [("org.bluez.GattService1", [("UUID", .string("8D53DC1D-1DB7-4CD3-868B-8A527460AA84"))])]
            ),
            object(
                "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF/service0020/char0021",
                [
                    (
                        "org.bluez.GattCharacteristic1",
                        [
                            ("UUID", .string("DA2E7828-FBCE-4E01-AE9E-261174997C48")),
                            ("Service", .objectPath("/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF/service0020")),
                            ("Flags", .strings(["write-without-response", "notify"])), ("MTU", .uint16(247)),
                            ("NotifyAcquired", .boolean(false)),
                        ]
                    )
                ]
            ),
        ]
        return try BlueZObjectTree(
            managedObjects: .dictionary(
                key: .objectPath,
                value: .dictionary(key: .string, value: .dictionary(key: .string, value: .variant)),
                objects
            )
        )
    }

    @Test func adaptersAreOrderedAndReadFromTheirProperties() throws {
        let adapters = try Self.tree().adapters
        #expect(adapters.map(\.name) == ["hci0", "hci1"])
        #expect(adapters.map(\.powered) == [true, false])
    }

    @Test(arguments: ["Zephyr", "AA:BB:CC:DD:EE:FF", "aa:bb:cc:dd:ee:ff", "AA_BB_CC_DD_EE_FF", "aa-bb-cc-dd-ee-ff"])
    func aDeviceIsFoundByNameOrAddress(_ target: String) throws {
        let devices = try Self.tree().devices(on: "/org/bluez/hci0")
        #expect(devices.first { $0.matches(target) }?.path == Self.device)
        #expect(devices.first?.advertisesSMP == true)
        #expect(devices.first?.rssi == -60)
    }

    @Test func theSMPCharacteristicIsFoundByItsServicesUUIDAndItsOwn() throws {
        let characteristic = try #require(try Self.tree().smpCharacteristic(of: Self.device))
        #expect(characteristic.path.rawValue.hasSuffix("service0020/char0021"))
        #expect(characteristic.mtu == 247)
        #expect(characteristic.offersAcquireNotify && !characteristic.offersAcquireWrite)
    }

    @Test func signalsUpdateTheTree() throws {
        var tree = try Self.tree()
        tree.update(
            Self.device,
            interface: "org.bluez.Device1",
            changed: ["Connected": .boolean(true), "ServicesResolved": .boolean(true)]
        )
        #expect(tree.devices(on: "/org/bluez/hci0").first?.servicesResolved == true)
        tree.remove(Self.device, interfaces: ["org.bluez.Device1"])
        #expect(tree.devices(on: "/org/bluez/hci0").isEmpty)
    }

    @Test func aReplyOfAnotherShapeIsRefused() {
        #expect(throws: BlueZError(.protocolViolation, "")) { try BlueZObjectTree(managedObjects: .string("no")) }
    }

    @Test(arguments: [
        ("org.bluez.Error.NotAuthorized", "", true), ("org.bluez.Error.AuthenticationFailed", "", true),
        ("org.bluez.Error.Failed", "Operation failed with ATT error: 0x05", true),
        ("org.bluez.Error.Failed", "Insufficient Encryption", true), ("org.bluez.Error.Failed", "Not connected", false),
        ("org.bluez.Error.InProgress", "", false),
    ])
    func errorsThatMeanPairing(name: String, message: String, pairing: Bool) {
        #expect(BlueZError.meansPairing(DBusRemoteError(name: name, message: message)) == pairing)
    }

    @Test(arguments: [
        ("8D53DC1D-1DB7-4CD3-868B-8A527460AA84", "8d53dc1d-1db7-4cd3-868b-8a527460aa84", true),
        ("180A", "0000180a-0000-1000-8000-00805f9b34fb", true), ("180A", "180F", false),
    ])
    func uuidsCompareByValue(a: String, b: String, same: Bool) {
        #expect(BlueZ.sameUUID(a, b) == same)
    }
}
