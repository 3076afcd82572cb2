import Foundation
import Testing

@testable import SMPSimulator

@Suite("Configuration")
struct ConfigurationTests {
    @Test(
        "mode names and the MCUboot mode values they report",
        arguments: [
            ("swap", BootloaderMode.swapUsingMove, 3), ("swap-scratch", .swapUsingScratch, 1),
            ("swap-offset", .swapUsingOffset, 9),
            ("overwrite", .overwriteOnly, 2), ("direct-xip", .directXIP, 4),
            ("direct-xip-revert", .directXIPWithRevert, 5),
            ("single-slot", .singleSlot, 0), ("firmware-loader", .firmwareLoader, 7), ("swap_move", .swapUsingMove, 3),
            ("DirectXIP", .directXIP, 4), ("none", BootloaderMode.none, -1), ("no-bootloader", BootloaderMode.none, -1),
        ]
    )
    func modes(name: String, mode: BootloaderMode, value: Int) {
        #expect(BootloaderMode(name: name) == mode)
        #expect(mode.mcubootModeValue == value)
    }

    @Test("options as in sim://?images=2&mode=overwrite")
    func options() throws {
        let configuration = try SimulatedDevice.Configuration(options: [
            "images": "2", "mode": "overwrite", "buf_size": "384", "slot_size": "0x20000", "no_downgrade": "1",
            "latency_ms": "3", "version": "2.1.0",
        ])
        #expect(configuration.imageCount == 2)
        #expect(configuration.bootloaderMode == .overwriteOnly)
        #expect(configuration.bufferSize == 384)
        #expect(configuration.slotSize == 0x20000)
        #expect(configuration.downgradePrevention)
        #expect(configuration.linkLatency == .milliseconds(3))
        #expect(configuration.factoryVersion == "2.1.0")
    }

    @Test("the defaults are the observed Zephyr 3.4 server's")
    func observedDefaults() {
        let configuration = SimulatedDevice.Configuration()
        #expect(configuration.release == .v3_4)
        #expect(configuration.bufferSize == 2048)
        #expect(configuration.bufferCount == 4)
        #expect(configuration.limitsBuffers)
        #expect(configuration.maximumDatagramSize == 1500)
        #expect(configuration.requestProcessingTime == .microseconds(800))
        #expect(configuration.resetDelay == .milliseconds(250))
        #expect(configuration.bootTime == .milliseconds(750))
        #expect(!configuration.fileHashSHA256)
        #expect(!configuration.legacyReturnCodes)
    }

    @Test("options for the release, the work queue, reset timing and the buffer pool")
    func releaseAndTimingOptions() throws {
        let configuration = try SimulatedDevice.Configuration(options: [
            "zephyr": "latest", "processing_us": "0", "reset_ms": "0", "boot_ms": "20", "buffers": "0",
            "buf_count": "8",
        ])
        #expect(configuration.release == .latest)
        #expect(configuration.requestProcessingTime == .zero)
        #expect(configuration.resetDelay == .zero)
        #expect(configuration.bootTime == .milliseconds(20))
        #expect(!configuration.limitsBuffers)
        #expect(configuration.bufferCount == 8)
        #expect(try SimulatedDevice.Configuration(options: ["zephyr": "3.4"]).release == .v3_4)
    }

    @Test(
        "bad options are refused with a message naming them",
        arguments: [
            ["images": "0"], ["images": "x"], ["mode": "swapish"], ["buf_size": "10"], ["colour": "red"],
            ["version": "a.b"], ["zephyr": "3.9"], ["reset_ms": "-1"],
            // Recovery options a bootloader without serial recovery cannot take, in either spelling.
            ["mode": "firmware-loader", "recovery_echo": "1"], ["mode": "firmware-loader", "recovery-echo": "1"],
            ["serial_recovery": "0", "recovery-buf": "256"], ["buf_size": "512", "buf-size": "1024"],
        ]
    )
    func badOptions(options: [String: String]) {
        #expect(throws: ConfigurationError.self) { try SimulatedDevice.Configuration(options: options) }
    }

    @Test("dashes and underscores are one option; serial recovery is set up before its options")
    func spellingsAndOrder() throws {
        var base = SimulatedDevice.Configuration.udp
        base.serialRecovery = nil
        let configuration = try SimulatedDevice.Configuration(
            options: ["recovery-echo": "1", "flash_align": "8", "serial-recovery": "1", "no-downgrade": "1"],
            base: base
        )
        #expect(configuration.serialRecovery?.echo == true)
        #expect(configuration.serialRecovery?.flashAlignment == 8)
        #expect(configuration.downgradePrevention)
    }

    @Test("profiles: UDP has 2048-byte buffers, serial 384")
    func profiles() {
        #expect(SimulatedDevice.Configuration.udp.bufferSize == 2048)
        #expect(SimulatedDevice.Configuration.serial.bufferSize == 384)
        #expect(SimulatedDevice.Configuration.realisticTiming.eraseBytesPerSecond != nil)
        #expect(SimulatedDevice.Configuration(imageCount: 99).imageCount == 8)
    }
}
