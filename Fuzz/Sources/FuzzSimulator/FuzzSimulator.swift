// Fuzz target `simulator`: the simulated device as a whole — every group handler, the MCUboot
// model, the upload session, settings, the file-system sandbox, SUIT — fed a sequence of frames
// with its state kept between them (a fresh device per input, so every input replays alone).
//
// Input: bytes 0 and 1 configure the device (bootloader mode, one or two images, Zephyr release,
// legacy return codes, definite or indefinite maps; starting in MCUboot's serial recovery or the
// firmware loader, recovery's optional commands and direct upload, the retention boot mode, the
// fall-back to recovery); the rest is cut into frames by their header length (SMPStreamDecoder,
// so a concatenation of request frames is a valid input; bytes that cannot start a header are
// skipped). Timing is zero: resets and boots happen at once, so an `os reset` with `boot_mode` 1
// puts the following frames before serial recovery.
// Properties: every answer is one well-formed SMP frame, a response to the request's group,
// command and sequence number, whose payload is one CBOR map.
import FuzzSupport
import Dispatch
import Foundation
import MCUboot
import SMPCBOR
import SMPCore
import SMPSimulator

final class Box<T>: @unchecked Sendable {
    var value: T?
}

/// Runs async work to completion from libFuzzer's synchronous callback.
func runBlocking<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
    let semaphore = DispatchSemaphore(value: 0)
    let box = Box<T>()
    Task {
        box.value = await body()
        semaphore.signal()
    }
    semaphore.wait()
    return box.value!
}

func configuration(_ selector: UInt8, _ recovery: UInt8) -> SimulatedDevice.Configuration {
    let modes = BootloaderMode.allCases
    let releases = ZephyrRelease.allCases
    let mode = Int(recovery & 0x03) << 3 | Int(selector & 0x07)
    return SimulatedDevice.Configuration(
        requestProcessingTime: .zero,
        resetDelay: .zero,
        bootTime: .zero,
        release: releases[Int(selector >> 5) % releases.count],
        imageCount: selector & 0x08 != 0 ? 2 : 1,
        bootloaderMode: modes[mode % modes.count],
        slotSize: 0x4000,
        legacyReturnCodes: selector & 0x10 != 0,
        zcborIndefiniteMaps: selector & 0x80 == 0,
        serialRecovery: SerialRecoveryConfiguration(
            echo: recovery & 0x08 != 0,
            mcumgrParameters: recovery & 0x08 != 0,
            directImageUpload: recovery & 0x10 != 0,
            storageErase: recovery & 0x08 != 0
        ),
        retentionBootMode: recovery & 0x20 == 0,
        recoveryWithoutApplication: recovery & 0x40 != 0,
        startsInRecovery: recovery & 0x04 != 0
    )
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let start, count >= 2 else { return 0 }
    let input = UnsafeBufferPointer(start: start, count: count)
    var decoder = SMPStreamDecoder()
    let frames: [[UInt8]] = decoder.feed(input.dropFirst(2)).compactMap {
        if case .frame(let frame) = $0 { frame } else { nil }
    }
    guard !frames.isEmpty, frames.count <= 64 else { return 0 }
    let config = configuration(input[0], input[1])
    runBlocking {
        let device = SimulatedDevice(configuration: config)
        for request in frames {
            let answers = await device.handle(request)
            for answer in answers {
                validate(answer, answering: request)
            }
            await device.waitUntilAnswering()
        }
        _ = await device.imageStates
    }
    return 0
}

func validate(_ answer: [UInt8], answering request: [UInt8]) {
    guard let frame = try? SMPFrame(parsing: answer) else { fatalError("an answer is not one SMP frame: \(answer)") }
    let asked = try! SMPHeader(parsing: request)
    check(frame.header.operation.isResponse, "answer operation \(frame.header.operation)")
    check(frame.header.sequence == asked.sequence, "answer sequence \(frame.header.sequence) for \(asked.sequence)")
    check(
        frame.header.group == asked.group && frame.header.command == asked.command,
        "answer to \(frame.header.group)/\(frame.header.command) for \(asked.group)/\(asked.command)"
    )
    guard let payload = try? frame.payloadValue() else { fatalError("answer payload is not one CBOR item") }
    check(payload.mapValue != nil, "answer payload is not a map: \(payload)")
}
