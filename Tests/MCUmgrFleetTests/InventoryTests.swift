import Foundation
import MCUmgrConnect
import MCUmgrFleet
import Testing

@Suite struct InventoryTests {
    @Test func readsURLsNamesLabelsAndComments() throws {
        let text = """
            # rack A
            udp://10.0.0.11:1337   pump-11   site=north  host=gw1
            \tudp://[::1]:1400 pump-12 # a trailing comment
            serial:///dev/ttyACM0?baud=115200\r
            ble://Zephyr%20DFU?adapter=hci1 bench-2 shelf=3

            """
        let inventory = try Inventory(parsing: text)
        #expect(inventory.devices.map(\.id) == ["pump-11", "pump-12", "serial:///dev/ttyACM0?baud=115200", "bench-2"])
        #expect(inventory.devices.map(\.line) == [2, 3, 4, 5])
        #expect(inventory.devices[0].labels == ["site": "north", "host": "gw1"])
        #expect(inventory.devices[1].url == .udp(host: "::1", port: 1400))
        #expect(inventory.devices[3].url == .ble(name: "Zephyr DFU", adapter: "hci1"))
    }

    @Test func everyDevicePrintsAsALineThatParsesBack() throws {
        let inventory = try Inventory(
            parsing: "udp://h:1 a x=1 b=2\nble://Zephyr%20DFU?pair=1\nsim://?images=2&mode=swap sim-1 k=v\n"
        )
        let printed = inventory.devices.map(\.inventoryLine).joined(separator: "\n")
        let again = try Inventory(parsing: printed)
        #expect(again.devices.map(\.url) == inventory.devices.map(\.url))
        #expect(again.devices.map(\.name) == inventory.devices.map(\.name))
        #expect(again.devices.map(\.labels) == inventory.devices.map(\.labels))
    }

    @Test(arguments: [
        ("udp://a:1\nudp://fe80::1]:5\n", 2, "not an IPv6 address"),
        ("udp://a:1 x\nudp://b:1 x\n", 2, "'x' is named twice (first on line 1)"),
        ("udp://a:1\n\nudp://a:1 other\n", 3, "listed twice (first on line 1)"),
        ("udp://a:1 site=\n", 1, "label 'site' has no value"),
        ("udp://a:1 site=1 site=2\n", 1, "label 'site' is given twice"),
        ("udp://a:1 site=1 name\n", 1, "the name comes right after the URL"),
        ("udp://a:1 name other\n", 1, "the name comes right after the URL"),
        ("udp://a:1 udp://b:1\n", 1, "one device per line"),
        ("# x\n10.0.0.1\n", 2, "has no scheme"),
        ("udp://a:1 a b/c=1\n", 1, "label key 'b/c'"),
        ("ftp://a\n", 1, "unknown scheme"),
    ])
    func refusesWhatItCannotReadNamingTheLine(text: String, line: Int, fragment: String) {
        do {
            _ = try Inventory(parsing: text)
            Issue.record("accepted \(text.debugDescription)")
        } catch {
            #expect(error.line == line, "\(error)")
            #expect(error.description.hasPrefix("line \(line): "), "\(error)")
            #expect(error.description.contains(fragment), "\(error)")
        }
    }

    @Test func aHashInsideAWordIsNotAComment() throws {
        let inventory = try Inventory(parsing: "udp://a:1 dev#1 # comment\n")
        #expect(inventory.devices.first?.name == "dev#1")
    }

    @Test func anEmptyInventoryHasNoDevice() throws {
        #expect(try Inventory(parsing: "# nothing\n\n").devices.isEmpty)
    }

    @Test func aMissingFileIsNamed() {
        #expect(throws: InventoryError.self) {
            try Inventory(contentsOf: URL(fileURLWithPath: "/nonexistent/fleet.txt"))
        }
    }
}

@Suite struct RolloutPolicyTests {
    @Test(arguments: [
        ("10%,50%,100%", 200, [20, 100, 200]),
        ("10%,50%,100%", 5, [1, 3, 5]),
        ("1,2,100%", 3, [1, 2, 3]),
        ("50%", 10, [5, 10]),
        ("100%", 1, [1]),
        ("30%,31%,100%", 3, [1, 2, 3]),
    ])
    func wavesEndAtCumulativeShares(text: String, total: Int, ends: [Int]) throws {
        let policy = RolloutPolicy(waves: try RolloutPolicy.waves(parsing: text))
        #expect(policy.waveEnds(of: total) == ends)
    }

    @Test(arguments: ["", "10%,", "50%,10%", "0%,100%", "0", "-1", "101%", "ten", "5,3"])
    func refusesWavesThatCannotBe(_ text: String) {
        #expect(throws: RolloutPolicyError.self) { _ = try RolloutPolicy.waves(parsing: text) }
    }

    @Test func theFailureBudgetIsACountOrAShareRoundedDown() throws {
        #expect(RolloutPolicy(maxFailures: try .init(parsing: "3")).failureLimit(of: 200) == 3)
        #expect(RolloutPolicy(maxFailures: try .init(parsing: "10%")).failureLimit(of: 205) == 20)
        #expect(RolloutPolicy().failureLimit(of: 200) == nil)
    }

    @Test func backOffDoublesUpToItsCeiling() {
        let policy = RolloutPolicy(backoff: .seconds(2), maximumBackoff: .seconds(10))
        #expect(
            (1...5).map { policy.backoff(afterFailures: $0) } == [
                .seconds(2), .seconds(4), .seconds(8), .seconds(10), .seconds(10),
            ]
        )
    }

    @Test func serialPortsAndBluetoothAdaptersAreSharedResources() throws {
        #expect(try ConnectionURL(parsing: "serial:///dev/ttyACM0").fleetResource == .serialPort("/dev/ttyACM0"))
        #expect(try ConnectionURL(parsing: "ble://x?adapter=hci1").fleetResource == .bleAdapter("hci1"))
        #expect(try ConnectionURL(parsing: "ble://x").fleetResource == .bleAdapter("default"))
        #expect(try ConnectionURL(parsing: "udp://h").fleetResource == nil)
    }
}
