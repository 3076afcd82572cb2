import Foundation
import MCUboot
import MCUmgr
import MCUmgrDFU
import SMPCore
import SMPDBus
import SMPSimulator
import SMPTestSupport
import Testing

@testable import SMPBLETransport

extension BlueZSuites {
    /// Our BlueZ central ↔ our BlueZ peripheral, over bluezoo: everything a real radio would carry
    /// but the radio. Each test has its own bus and bluezoo (see `Bluezoo`).
    @Suite(.serialized, .requiring(Bluezoo.available, Bluezoo.missing))
    struct BlueZCentralPeripheralTests {
        /// Echo and image list over the acquired sockets and over WriteValue/PropertiesChanged.
        @Test(arguments: [true, false])
        func echoAndImageList(acquire: Bool) async throws {
            let scene = try await BlueZScene.start(offerAcquire: acquire)
            do {
                let link = try await BlueZCentral(try scene.central(acquire: acquire)).connect()
                let client = try await SMPClient.connect(
                    BlueZTesting.transport(over: link),
                    configuration: BlueZTesting.client
                )
                #expect(link.writesThroughSocket == acquire)
                #expect(link.notificationsThroughSocket == acquire)
                #expect(link.maximumWriteLength == 495)
                let text = String(repeating: "echo through BlueZ ", count: 40)
                #expect(try await client.send(OSManagement.Echo(text: text)).text == text)
                let images = try await client.send(ImageManagement.StateRead()).images
                #expect(images.count == 1 && images[0].isActive)
                await client.close()
                #expect(scene.peripheral.connectionCount == 1)
                // 760 characters and more answered in notifications of at most 495 bytes.
                #expect(scene.peripheral.notificationCount >= 3)
            } catch {
                await scene.stop()
                throw error
            }
            await scene.stop()
        }

        /// An upgrade in every mode: upload, mark, reset in the middle (the device drops the link:
        /// our peripheral closes the acquired sockets, which the central takes as the link lost),
        /// reconnect, verify.
        @Test(arguments: [FirmwareUpgrade.Mode.testAndConfirm, .confirmOnly, .testOnly, .uploadOnly])
        func upgradeInEveryMode(mode: FirmwareUpgrade.Mode) async throws {
            let scene = try await BlueZScene.start(offerAcquire: true)
            do {
                let image = try BlueZTesting.image(size: 48 * 1024)
                #expect(
                    try await BlueZTesting.run(BlueZTesting.upgrade(try scene.transport(), mode: mode), image.package)
                )
                let states = await scene.device.imageStates
                let new = states.first { $0.hash == image.hash }
                switch mode {
                case .testAndConfirm, .confirmOnly:
                    #expect(new?.isActive == true && new?.isConfirmed == true, "\(states)")
                case .testOnly:
                    #expect(new?.isActive == true && new?.isConfirmed == false, "\(states)")
                default:
                    #expect(new?.slot == 1 && new?.isActive == false, "\(states)")
                }
                if mode != .uploadOnly {
                    #expect(await scene.device.bootCount >= 2)
                    #expect(scene.peripheral.dropCount >= 1)
                    #expect(scene.peripheral.connectionCount >= 2)
                }
            } catch {
                await scene.stop()
                throw error
            }
            await scene.stop()
        }

        /// Over WriteValue/PropertiesChanged bluezoo shows no link drop for a reset (docs/BLE.md):
        /// the test support restarts bluezoo when the device reboots, as bluetoothd restarting, which
        /// both sides must handle: the central loses the link, the peripheral registers again, the
        /// upgrade reconnects and verifies.
        @Test func upgradeOverDBusWithBlueZRestartingAtTheReset() async throws {
            let scene = try await BlueZScene.start(offerAcquire: false)
            do {
                let image = try BlueZTesting.image(size: 32 * 1024)
                let restarter = Task {
                    try await BlueZTesting.eventually("the device rebooted") { await scene.device.bootCount >= 2 }
                    try await scene.zoo.restart()
                }
                let upgrade = BlueZTesting.upgrade(try scene.transport(acquire: false), mode: .testAndConfirm)
                #expect(try await BlueZTesting.run(upgrade, image.package))
                try await restarter.value
                let states = await scene.device.imageStates
                #expect(states.contains { $0.hash == image.hash && $0.isActive && $0.isConfirmed }, "\(states)")
            } catch {
                await scene.stop()
                throw error
            }
            await scene.stop()
        }

        /// The link drops a third of the way through the upload (BlueZ goes away and comes back):
        /// the upgrade reconnects and the upload resumes from the device's offset.
        @Test(arguments: [true, false])
        func aLinkDroppedMidUploadResumes(acquire: Bool) async throws {
            // 50 ms a chunk: the upload takes seconds of device time whatever the machine, so the
            // watcher below sees it pass a third (a sleep only gets longer under load).
            let device = SimulatedDevice(
                configuration: .init(bufferSize: 2048, bufferCount: 4, requestProcessingTime: .milliseconds(50))
            )
            let scene = try await BlueZScene.start(offerAcquire: acquire, device: device)
            do {
                let size = 96 * 1024
                let image = try BlueZTesting.image(size: size)
                let restarter = Task {
                    try await BlueZTesting.eventually("a third uploaded") {
                        (await scene.device.uploadSession?.offset ?? 0) > size / 3
                    }
                    // The device stops answering until the link is back, so the upload cannot
                    // finish before BlueZ goes away, however loaded the machine.
                    await scene.device.inject(.dropRequests(every: 1))
                    try await scene.zoo.restart()
                    await scene.device.setFaults(Faults())
                }
                var uploaded = 0
                var completed = false
                let upgrade = BlueZTesting.upgrade(try scene.transport(acquire: acquire), mode: .uploadOnly)
                for try await event in upgrade.run(images: [image.package]) {
                    if case .completed(let summary) = event {
                        completed = true
                        uploaded = summary.uploadedBytes
                    }
                }
                try await restarter.value
                #expect(completed)
                #expect(scene.peripheral.dropCount >= 1)
                #expect(scene.peripheral.connectionCount >= 2)
                // Resumed, not started over: less than the image again was sent after the drop.
                #expect(uploaded < 2 * size, "\(uploaded) bytes uploaded for a \(size)-byte image")
                #expect(await scene.device.imageStates.contains { $0.hash == image.hash && $0.slot == 1 })
            } catch {
                await scene.stop()
                throw error
            }
            await scene.stop()
        }

        /// The write length follows the MTU BlueZ reports, and notifications never exceed it.
        @Test(arguments: [23, 64, 185, 247, 517])
        func severalMTUs(mtu: Int) async throws {
            let scene = try await BlueZScene.start(offerAcquire: false, maximumMTU: mtu)
            do {
                let link = try await BlueZCentral(try scene.central(acquire: false)).connect()
                let client = try await SMPClient.connect(
                    BlueZTesting.transport(over: link),
                    configuration: BlueZTesting.client
                )
                // MTU − 3, but never more than an attribute value's 512 bytes.
                #expect(link.maximumWriteLength == min(512, max(20, mtu - 3)))
                let text = String(repeating: "x", count: 300)
                #expect(try await client.send(OSManagement.Echo(text: text)).text == text)
                #expect(try await client.send(ImageManagement.StateRead()).images.count == 1)
                await client.close()
                // The echo's answer alone is 300 + 11 bytes: at least that over MTU − 3 notifications.
                let largest = min(512, mtu - 3)
                #expect(scene.peripheral.notificationCount >= (311 + largest - 1) / largest)
            } catch {
                await scene.stop()
                throw error
            }
            await scene.stop()
        }
    }
}
