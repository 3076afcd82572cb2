// Fuzz target `mcuboot-image`: MCUbootImage parsing (header, protected and unprotected TLV
// areas, trailer) and verification (hash, KEYHASH/PUBKEY, ECDSA/Ed25519/RSA signatures,
// dependencies, security counter), as `mcumgr image info` and the upgrade planner run them on
// files from users.
//
// Input: an image file. It is verified without a key and with the committed fixture keys
// (Tests/MCUbootTests/Fixtures), and, when it parses and has a hash TLV of the right size, again
// with that hash patched to the computed digest, so the signature checks behind a valid hash are
// reached too.
// Properties: parsed areas lie within the file; a patched hash verifies as valid.
import FuzzSupport
import Foundation
import MCUboot

/// The fixture keys as PEM. The keys are made per input: a global ImagePublicKey holds its key
/// bytes behind an enum payload pointer whose spare bits carry the case, which LeakSanitizer cannot
/// follow, so it would report them as leaked at exit.
let pems: [String] = [
    """
-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEJ/7qcXTBwem79aicHMZZkM6mezXO
beWHFSsMTDjgGPkBABWaqPqC3bA2/81DKhjqMKccLmV+G+OBgOTOJB+uSw==
-----END PUBLIC KEY-----
""",
    """
-----BEGIN PUBLIC KEY-----
MCowBQYDK2VwAyEAdnTENJ9Y/+AiTznWwX1zaC91mmZDFXnXu5Jc5qaefsY=
-----END PUBLIC KEY-----
""",
]


/// Builds the globals before the first input, so their allocations are not counted as a run's.
@_cdecl("LLVMFuzzerInitialize")
public func initialize(_ argc: UnsafeMutablePointer<CInt>?, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?) -> CInt {
    _ = pems.count
    return 0
}

func describe(_ image: MCUbootImage) {
    _ = image.header.flags.description
    _ = image.header.version.description
    _ = image.allTLVs.map(\.description)
    _ = image.securityCounter
    _ = image.dependencies.map(\.description)
    _ = image.isPureSignature
    _ = image.hashAlgorithm
    if let trailer = image.trailer {
        _ = trailer.magic.description
        _ = ImageTrailer.describeFlag(trailer.imageOK)
    }
    for algorithm in ImageHashAlgorithm.allCases { _ = image.computeHash(algorithm: algorithm) }
}

func verifyAll(_ image: MCUbootImage) -> [ImageVerification] {
    var reports = [image.verify()]
    for pem in pems { reports.append(image.verify(publicKey: try! ImagePublicKey(pem: pem))) }
    for report in reports {
        _ = report.hash.description
        _ = report.signature.description
        _ = report.verdict.description
        _ = report.notes
    }
    return reports
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = count > 0 && start != nil ? Data(bytes: start!, count: count) : Data()
    if let header = try? ImageHeader(parsing: data) {
        _ = header.flags.description
    }
    let image: MCUbootImage
    do {
        image = try MCUbootImage(data)
    } catch {
        _ = error.description
        return 0
    }
    check(image.tlvArea.upperBound <= data.count, "TLV area beyond the file")
    if let area = image.protectedTLVArea { check(area.upperBound <= image.tlvArea.lowerBound, "areas overlap") }
    for tlv in image.allTLVs { check(tlv.offset + 4 + tlv.value.count <= data.count, "TLV beyond the file") }
    describe(image)
    _ = verifyAll(image)

    // Patch the hash TLV to the computed digest and verify again: the signature paths run behind
    // a hash that checks.
    if let tlv = image.hashTLV, tlv.value.count > 0, !image.header.flags.isEncrypted {
        let digest = image.computeHash()
        guard digest.count == tlv.value.count, digest != tlv.value else { return 0 }
        var patched = data
        let at = tlv.offset + 4
        patched.replaceSubrange(at..<at + digest.count, with: digest)
        guard let fixed = try? MCUbootImage(patched) else { fatalError("patching the hash made the image unparsable") }
        for report in verifyAll(fixed) where report.hash != .valid {
            if case .notCheckable = report.hash { continue }
            fatalError("a patched hash does not verify: \(report.hash)")
        }
    }
    return 0
}
