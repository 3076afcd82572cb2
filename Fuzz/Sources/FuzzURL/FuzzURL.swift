// Fuzz target `url`: what `--conn`, MCUMGR_CONN, profiles and fleet inventories feed the tool —
// ConnectionURL parsing (MCUmgrConnect), the profile file
// (ProfileStore.swift, likewise), the simulator's `sim://?…` options
// (SimulatedDevice.Configuration(options:)) and image version strings (ImageVersion).
//
// Input: byte 0 selects: 0 a connection string; 1 the bytes of profiles.json, whose URLs are then
// parsed; 2 simulator options `k=v&k=v`; 3 an image version string.
// Properties: every parsed URL prints (description) to a string that parses back to the same
// value; a parsed version prints to a string that parses back to it.
import FuzzSupport
import Foundation
import MCUboot
import MCUmgrConnect
import SMPSimulator

/// Builds the globals before the first input, so their allocations are not counted as a run's.
@_cdecl("LLVMFuzzerInitialize")
public func initialize(
    _ argc: UnsafeMutablePointer<CInt>?,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?
) -> CInt {
    _ = profileDirectory
    return 0
}

/// A directory of this process's own for profiles.json, removed at exit by the OS temp cleaner.
let profileDirectory: URL = {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("mcumgr-fuzz-url-\(getpid())")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}()

func parse(_ text: String) {
    let url: ConnectionURL
    do {
        url = try ConnectionURL(parsing: text)
    } catch {
        _ = error.description
        return
    }
    let printed = url.description
    guard let again = try? ConnectionURL(parsing: printed) else {
        fatalError("'\(printed)' (from '\(text)') does not parse")
    }
    check(again == url, "'\(text)' → \(url) → '\(printed)' → \(again)")
    if case .simulator(let options) = url { simulatorOptions(options) }
}

func simulatorOptions(_ options: [String: String]) {
    do {
        let configuration = try SimulatedDevice.Configuration(options: options)
        _ = configuration.bootloaderMode.description
    } catch {
        _ = error.description
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let start, count >= 1 else { return 0 }
    let input = UnsafeBufferPointer(start: start, count: count)
    let rest = Array(input.dropFirst())
    let text = String(decoding: rest, as: UTF8.self)
    switch input[0] % 4 {
    case 0:
        parse(text)
    case 1 where !rest.isEmpty:
        // (Not an empty file: swift-foundation's Data(contentsOf:) leaks its 4 KiB read buffer for
        // an empty file in this toolchain; see docs/RELIABILITY.md.)
        let store = ProfileStore(directory: profileDirectory)
        do {
            try Data(rest).write(to: profileDirectory.appendingPathComponent("profiles.json"))
            for profile in try store.load() {
                parse(profile.url)
                _ = try? store.url(of: profile.name)
            }
        } catch {
            _ = String(describing: error)
        }
    case 2:
        var options: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            options[parts[0]] = parts.count > 1 ? parts[1] : ""
        }
        simulatorOptions(options)
    case 1:
        break
    default:
        if let version = ImageVersion(text) {
            check(ImageVersion(version.description) == version, "version '\(text)' does not re-parse")
            check(ImageVersion(version.imgtoolDescription) == version, "imgtool form of '\(text)' does not re-parse")
        }
    }
    return 0
}
