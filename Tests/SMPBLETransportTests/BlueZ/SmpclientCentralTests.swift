import Foundation
import MCUboot
import SMPCore
import SMPDBus
import SMPSimulator
import SMPTestSupport
import Testing

@testable import SMPBLETransport

extension BlueZSuites {
    /// An independent central — smpclient 7.3.0's BLE transport on bleak 3.1's BlueZ backend, as
    /// shipped — drives our simulated BlueZ peripheral over bluezoo: echo, image state read, an
    /// upload, a test and a reset.
    ///
    /// The test support pins the adapter bleak scans on (`hci0`): without it bleak takes the first
    /// adapter in Python's hash order and scans on the peripheral's own one half the time (docs/BLE.md).
    /// Nothing else of the peer is changed.
    @Suite(
        .serialized,
        .requiring(Bluezoo.available, Bluezoo.missing),
        .requiring(Peers.available("smpclient"), "needs smpclient with bleak (scripts/setup-peers.sh)")
    )
    struct SmpclientCentralTests {
        static let script = """
            import asyncio, sys
            from bleak import BleakScanner

            # Pin the adapter (bleak's default follows Python's hash order); the transport is as shipped.
            for name in ("find_device_by_name", "find_device_by_address"):
                original = getattr(BleakScanner, name)
                def pinned(target, timeout=10.0, _original=original, **kwargs):
                    kwargs["bluez"] = {**kwargs.get("bluez", {}), "adapter": "hci0"}
                    return _original(target, timeout=timeout, **kwargs)
                setattr(BleakScanner, name, staticmethod(pinned))

            from smpclient import SMPClient
            from smpclient.generics import success
            from smpclient.transport.ble import SMPBLETransport
            from smpclient.requests.os_management import EchoWrite, ResetWrite
            from smpclient.requests.image_management import ImageStatesRead, ImageStatesWrite

            async def main():
                image = open(sys.argv[2], "rb").read()
                async with SMPClient(SMPBLETransport(), sys.argv[1], timeout_s=20) as client:
                    r = await client.request(EchoWrite(d="hello from smpclient"))
                    assert success(r), r
                    print("echo", r.r)
                    r = await client.request(ImageStatesRead())
                    assert success(r), r
                    print("images", len(r.images), r.images[0].version)
                    async for offset in client.upload(image, first_timeout_s=20, subsequent_timeout_s=20):
                        pass
                    print("uploaded", len(image))
                    r = await client.request(ImageStatesRead())
                    new = [s for s in r.images if s.slot == 1][0]
                    r = await client.request(ImageStatesWrite(hash=new.hash, confirm=False))
                    assert success(r), r
                    print("tested", new.hash.hex())
                    r = await client.request(ResetWrite())
                    assert success(r), r
                    print("reset")

            asyncio.run(main())
            """

        /// bluezoo announces a device once, when it first sees its advertisement; bleak's name search
        /// misses an announcement made before its discovery started. So the peripheral starts
        /// advertising once bleak is discovering (bluezoo's log says so), as a device switched on
        /// while a phone scans.
        @Test func echoStateUploadTestAndReset() async throws {
            let zoo = try await Bluezoo.start()
            defer { zoo.stop() }
            let device = SimulatedDevice(configuration: .init(bufferSize: 2048, bufferCount: 4))
            let peripheral = SimulatedBlueZPeripheral(
                device: device,
                options: .init(name: "SMPSim", adapter: "hci1", busAddress: try zoo.address)
            )
            let image = try BlueZTesting.image(size: 24 * 1024)
            let scratch = FileManager.default.temporaryDirectory.appendingPathComponent(
                "smpclient-\(UUID().uuidString).bin"
            )
            let bytes = try #require(image.package.mcuboot?.data)
            try bytes.write(to: scratch)
            defer { try? FileManager.default.removeItem(at: scratch) }
            let python = try #require(Peers.python, "no python3 with the peers")
            let central = RunningProcess(
                "/usr/bin/nice",
                [
                    "-n", "10", "/usr/bin/env", "DBUS_SYSTEM_BUS_ADDRESS=\(zoo.bus.address)", python, "-c", Self.script,
                    "SMPSim", scratch.path,
                ],
                timeout: .seconds(300)
            )
            defer { central.stop() }
            try await BlueZTesting.eventually("bleak started discovery") {
                zoo.log.contains("Starting discovery on adapter[0]")
            }
            try await peripheral.start()
            let result = try await central.finished()
            await peripheral.stop()
            #expect(result.status == 0, "smpclient: \(result.stderr.suffix(3000))\nbluezoo: \(zoo.log.suffix(2000))")
            #expect(result.stdout.contains("echo hello from smpclient"))
            #expect(result.stdout.contains("images 1 1.0.0"))
            #expect(result.stdout.contains("uploaded \(bytes.count)"))
            #expect(result.stdout.contains("tested \(image.hash.map { String(format: "%02x", $0) }.joined())"))
            #expect(result.stdout.contains("reset"))
            guard result.status == 0 else { return }
            // The test image runs after the reset (MCUboot swapped it in).
            try await BlueZTesting.eventually("the device rebooted into the test image") {
                await device.imageStates.contains { $0.hash == image.hash && $0.isActive }
            }
        }
    }
}
