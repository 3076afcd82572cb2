// Fuzz target `package`: firmware packages as `mcumgr upgrade FILE` reads them — a bare image, a
// zip with `manifest.json` (nRF Connect SDK, Zephyr sysbuild and MCUboot dialects), a SUIT
// envelope (tag 107) — plus the manifest parser and the SUIT envelope parser on their own.
//
// Input: byte 0 selects how the rest is used:
//   0: the package file itself (zip, image or SUIT envelope, recognised by its first bytes);
//   1: `manifest.json` text for PackageManifest(json:);
//   2: a SUIT envelope for SUITEnvelope(_:);
//   3: a zip built here (stored entries, valid CRCs, via the tests' ZipBuilder) from parts of
//      the rest separated by 0xFF: `manifest.json`, then name/content pairs; a content of one
//      byte N is replaced by a well-formed MCUboot image of version N.0.N, so the fuzzer explores
//      manifest dialects against real images instead of fighting zip CRCs.
// Properties: every image of a parsed package parses as an MCUboot image (MCUboot content) and
// its hash is the hash TLV's value.
import FuzzSupport
import Foundation
import MCUboot

func le16(_ value: Int) -> [UInt8] { [UInt8(value & 0xff), UInt8((value >> 8) & 0xff)] }
func le32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) } }

/// A well-formed unsigned image: 32-byte header, `size` payload bytes, a SHA-256 TLV.
func makeImage(version: UInt8, size: Int) -> [UInt8] {
    var bytes = le32(0x96f3_b83d) + le32(0) + le16(32) + le16(0) + le32(size) + le32(0)
    bytes += [version, 0] + le16(Int(version)) + le32(0) + le32(0)
    bytes += (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7) }
    let digest = ImageHashAlgorithm.sha256.hash(bytes)
    bytes += le16(0x6907) + le16(4 + 4 + 32) + le16(0x10) + le16(32) + digest
    return bytes
}

func exercise(_ package: FirmwarePackage) {
    for image in package.images {
        _ = image.content.description
        _ = image.version?.description
        if let mcuboot = image.mcuboot {
            check(mcuboot.hash == nil || image.hash == mcuboot.hash!, "package hash differs from the hash TLV")
            _ = mcuboot.verify()
        }
        _ = image.suit?.digestAlgorithmName
        _ = package.resource(named: image.fileName)
        _ = package.resource(named: "file://" + image.fileName)
    }
    _ = package.isSUIT
    _ = package.format.description
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let start, count >= 1 else { return 0 }
    let input = UnsafeBufferPointer(start: start, count: count)
    let rest = Data(input.dropFirst())
    do {
        switch input[0] % 4 {
        case 0:
            exercise(try FirmwarePackage(data: rest, fileName: rest.first == 0x50 ? "fuzz.zip" : "fuzz.bin"))
        case 1:
            let manifest = try PackageManifest(json: rest)
            _ = manifest.files.map(\.file)
        case 2:
            let envelope = try SUITEnvelope(rest)
            _ = envelope.digestAlgorithmName
            _ = envelope.integratedPayloads
        default:
            let parts = rest.split(separator: 0xff, maxSplits: 16, omittingEmptySubsequences: false)
            var zip = ZipBuilder()
            if let manifest = parts.first { zip.add("manifest.json", manifest) }
            var index = 1
            while index + 1 < parts.count {
                let name = String(decoding: parts[index], as: UTF8.self)
                let content = parts[index + 1]
                zip.add(name, content.count == 1 ? makeImage(version: content.first!, size: 16) : Array(content))
                index += 2
            }
            exercise(try FirmwarePackage(data: zip.data, fileName: "fuzz.zip"))
        }
    } catch {
        _ = String(describing: error)
    }
    return 0
}
