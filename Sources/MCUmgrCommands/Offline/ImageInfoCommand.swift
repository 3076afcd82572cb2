import ArgumentParser
import Foundation
import MCUboot
import SMPBytes

/// `mcumgr image info FILE [--key PEM] [--json]`: what `imgtool dumpinfo` shows about an image
/// or every image in a package, plus the verdict: does the hash check, does the signature check,
/// and what will the bootloader make of it. Works offline; no device needed.
///
/// Exits 1 (after printing the report) when MCUboot would reject an image.
struct ImageInfoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Show and verify an MCUboot image, firmware zip or SUIT envelope before uploading it.",
        discussion: """
            Prints the header, the protected and unprotected TLVs, the trailer of padded images, the \
            hash the device will report, and a verdict. With --key (a public key, or the private key \
            file imgtool keygen wrote) the signature is checked too. Exits with status 1 when the \
            bootloader would reject an image.
            """
    )

    @OptionGroup var global: LocalOptions

    @Argument(help: "An MCUboot image (.bin), a firmware package (.zip with manifest.json) or a SUIT envelope (.suit).")
    var file: String

    @Option(help: "Signing key to check the signature with: PEM or DER, public or private (imgtool keygen output).")
    var key: String?

    func validate() throws {
        try global.refuseClientOptions(command: "image info", reason: "it reads a local file")
    }

    /// A package that MCUboot would refuse, reported after the details were printed.
    struct Rejected: Error, CustomStringConvertible {
        var description: String
    }

    func run() async throws {
        // The same reading as `image upload` and `upgrade`: a missing file, a folder or an empty
        // file get the same one-line messages and statuses everywhere.
        let package = try loadPackage(file)
        let publicKey = try key.map { path throws -> ImagePublicKey in
            let contents = try readLocalFile(path)
            do {
                return try ImagePublicKey(keyFile: contents)
            } catch let error as MCUbootError {
                throw InputFileError(.badData, "--key " + packageProblem(error, name: path))
            }
        }
        let reports = package.images.map { image in image.mcuboot?.verify(publicKey: publicKey) }
        if global.json {
            Console.out(Self.json(package, reports: reports, file: file, keyGiven: publicKey != nil).rendered())
        } else {
            for line in Self.text(package, reports: reports, file: file) { Console.out(line) }
        }
        let rejected = zip(package.images, reports).filter { $0.1?.verdict.isRejected == true }
        let badEnvelopes = package.images.filter { $0.suit?.isDigestValid == false }
        if let (image, report) = rejected.first, case .rejected(let reason)? = report?.verdict {
            throw Rejected(
                description: "\(image.fileName) (image \(image.imageIndex)) would be rejected by MCUboot: \(reason)"
            )
        }
        if let envelope = badEnvelopes.first {
            throw Rejected(description: "\(envelope.fileName): the SUIT digest does not match the manifest")
        }
    }

    // MARK: - Text

    static func text(_ package: FirmwarePackage, reports: [ImageVerification?], file: String) -> [String] {
        var lines: [String] = []
        let name = (file as NSString).lastPathComponent
        switch package.format {
        case .image: break
        case .zip:
            let xip = package.isDirectXIP ? ", DirectXIP" : ""
            lines.append("\(name): firmware zip, \(package.images.count) image(s)\(xip)")
            if let label = package.manifest?.name { lines.append("  name: \(label)") }
        case .suitEnvelope: lines.append("\(name): SUIT envelope")
        case .suitZip:
            lines.append(
                "\(name): SUIT package, \(package.images.count) image(s), \(package.resources.count) resource(s)"
            )
        }
        for (image, report) in zip(package.images, reports) {
            if package.format != .image { lines.append("") }
            lines += imageText(image, report: report, inPackage: package.format != .image)
        }
        if !package.resources.isEmpty {
            lines.append("")
            lines.append(
                "resources: " + package.resources.map { "\($0.name) (\($0.data.count) bytes)" }.joined(separator: ", ")
            )
        }
        for note in package.notes { lines.append("warning: \(note)") }
        return lines
    }

    private static func hex(_ value: some BinaryInteger) -> String { "0x" + String(value, radix: 16) }

    private static func imageText(_ image: FirmwarePackage.Image, report: ImageVerification?, inPackage: Bool)
        -> [String]
    {
        var lines: [String] = []
        let indent = inPackage ? "  " : ""
        func add(_ label: String, _ value: String) {
            lines.append(indent + label.padding(toLength: 13, withPad: " ", startingAt: 0) + value)
        }
        switch image.content {
        case .suitCache:
            lines.append("\(image.fileName): SUIT cache for partition \(image.imageIndex), \(image.data.count) bytes")
            return lines
        case .suitEnvelope:
            lines.append("\(image.fileName): SUIT envelope, \(image.data.count) bytes")
            guard let envelope = image.suit else { return lines }
            add("image", "\(image.imageIndex)")
            add("digest", "\(Hex.encode(envelope.digest)) (\(envelope.digestAlgorithmName))")
            add("digest check", envelope.isDigestValid.map { $0 ? "ok" : "MISMATCH" } ?? "not checked")
            if let sequence = envelope.sequenceNumber { add("sequence", "\(sequence)") }
            add("signatures", "\(envelope.signatureCount) (not checked)")
            return lines
        case .mcuboot:
            break
        }
        guard let mcuboot = image.mcuboot else { return lines }
        let header = mcuboot.header
        lines.append("\(image.fileName): MCUboot image, \(image.data.count) bytes")
        if inPackage { add("target", "image \(image.imageIndex), slot \(image.slot)") }
        add("version", "\(header.version) (\(header.version.imgtoolDescription))")
        add("hash", Hex.encode(image.hash) + (mcuboot.hashAlgorithm.map { " (\($0))" } ?? ""))
        add(
            "header",
            "magic \(hex(header.magic))  load_addr \(hex(header.loadAddress))  hdr_size \(hex(header.headerSize))  "
                + "protected_tlv_size \(hex(header.protectedTLVSize))  img_size \(hex(header.imageSize))  flags \(header.flags)"
        )
        if let area = mcuboot.protectedTLVArea {
            lines.append(indent + "protected TLVs (offset \(hex(area.lowerBound)), \(hex(area.count)) bytes):")
            lines += tlvLines(mcuboot.protectedTLVs, indent: indent)
        }
        lines.append(indent + "TLVs (offset \(hex(mcuboot.tlvArea.lowerBound)), \(hex(mcuboot.tlvArea.count)) bytes):")
        lines += tlvLines(mcuboot.tlvs, indent: indent)
        if let trailer = mcuboot.trailer {
            add(
                "trailer",
                "magic \(trailer.magic), image_ok \(ImageTrailer.describeFlag(trailer.imageOK)), "
                    + "copy_done \(ImageTrailer.describeFlag(trailer.copyDone)), "
                    + "swap_info \(ImageTrailer.describeFlag(trailer.swapInfo)), padding \(trailer.paddingLength) bytes"
            )
        }
        if let report {
            add("hash check", report.hash.description)
            add("signature", report.signature.description)
            add("bootloader", report.verdict.description)
            for note in report.notes { add("note", note) }
        }
        return lines
    }

    private static func tlvLines(_ tlvs: [ImageTLV], indent: String) -> [String] {
        tlvs.map { record in
            let label = "\(record.kind)".padding(toLength: 20, withPad: " ", startingAt: 0)
            let length = "\(record.value.count) bytes".padding(toLength: 10, withPad: " ", startingAt: 0)
            let data = record.value.count > 32 ? Hex.encode(record.value.prefix(32)) + "…" : Hex.encode(record.value)
            return indent + "  " + label + length + data
        }
    }

    // MARK: - JSON

    static func json(_ package: FirmwarePackage, reports: [ImageVerification?], file: String, keyGiven: Bool)
        -> JSONValue
    {
        var members: [(String, JSONValue)] = [
            ("file", .string(file)),
            ("format", .string(package.format.rawValue)),
            ("direct_xip", .bool(package.isDirectXIP)),
            ("key_checked", .bool(keyGiven)),
        ]
        if let label = package.manifest?.name { members.append(("name", .string(label))) }
        members.append(("images", .array(zip(package.images, reports).map { imageJSON($0.0, report: $0.1) })))
        if package.isSUIT {
            members.append(
                (
                    "resources",
                    .array(
                        package.resources.map {
                            .object([("name", .string($0.name)), ("size", .int(Int64($0.data.count)))])
                        }
                    )
                )
            )
        }
        members.append(("notes", .array(package.notes.map { .string($0) })))
        return .object(members)
    }

    private static func imageJSON(_ image: FirmwarePackage.Image, report: ImageVerification?) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("image", .int(Int64(image.imageIndex))),
            ("slot", .int(Int64(image.slot))),
            ("file", .string(image.fileName)),
            ("content", .string(image.content.rawValue)),
            ("size", .int(Int64(image.data.count))),
        ]
        if let version = image.version { members.append(("version", .string(version.description))) }
        members.append(("hash", .string(Hex.encode(image.hash))))
        if let envelope = image.suit {
            members += [
                ("digest_algorithm", .string(envelope.digestAlgorithmName)),
                ("digest_valid", envelope.isDigestValid.map { .bool($0) } ?? .null),
                ("sequence_number", envelope.sequenceNumber.map { .uint($0) } ?? .null),
                ("signatures", .int(Int64(envelope.signatureCount))),
            ]
        }
        guard let mcuboot = image.mcuboot else { return .object(members) }
        let header = mcuboot.header
        members.append(("hash_algorithm", mcuboot.hashAlgorithm.map { .string($0.rawValue) } ?? .null))
        members.append(
            (
                "header",
                .object([
                    ("magic", .uint(UInt64(header.magic))),
                    ("load_address", .uint(UInt64(header.loadAddress))),
                    ("header_size", .uint(UInt64(header.headerSize))),
                    ("protected_tlv_size", .uint(UInt64(header.protectedTLVSize))),
                    ("image_size", .uint(UInt64(header.imageSize))),
                    ("flags", .uint(UInt64(header.flags.rawValue))),
                    ("flag_names", .array(header.flags.names.map { .string($0) })),
                    ("version", .string(header.version.description)),
                    ("bootable", .bool(header.isBootable)),
                ])
            )
        )
        members.append(("tlvs", .array(mcuboot.allTLVs.map(tlvJSON))))
        if let trailer = mcuboot.trailer {
            members.append(
                (
                    "trailer",
                    .object([
                        ("magic", .string(trailer.magic.description)),
                        ("image_ok", trailer.imageOK.map { .uint(UInt64($0)) } ?? .null),
                        ("copy_done", trailer.copyDone.map { .uint(UInt64($0)) } ?? .null),
                        ("swap_info", trailer.swapInfo.map { .uint(UInt64($0)) } ?? .null),
                        ("swap_size", trailer.swapSize.map { .uint(UInt64($0)) } ?? .null),
                        ("padding", .int(Int64(trailer.paddingLength))),
                    ])
                )
            )
        }
        if let counter = mcuboot.securityCounter { members.append(("security_counter", .uint(UInt64(counter)))) }
        members.append(
            (
                "dependencies",
                .array(
                    mcuboot.dependencies.map {
                        .object([
                            ("image", .int(Int64($0.imageIndex))), ("version", .string($0.minimumVersion.description)),
                        ])
                    }
                )
            )
        )
        if let report { members.append(("verification", verificationJSON(report))) }
        return .object(members)
    }

    private static func tlvJSON(_ record: ImageTLV) -> JSONValue {
        .object([
            ("type", .uint(UInt64(record.kind.rawValue))),
            ("name", .string(record.kind.name)),
            ("len", .int(Int64(record.value.count))),
            ("protected", .bool(record.isProtected)),
            ("offset", .int(Int64(record.offset))),
            ("data", .string(Hex.encode(record.value))),
        ])
    }

    private static func verificationJSON(_ report: ImageVerification) -> JSONValue {
        let hash: String
        switch report.hash {
        case .valid: hash = "ok"
        case .mismatch: hash = "mismatch"
        case .missing: hash = "missing"
        case .notCheckable: hash = "not_checked"
        }
        let signature: String
        switch report.signature {
        case .valid: signature = "ok"
        case .validForEmbeddedKey: signature = "ok_embedded_key"
        case .invalid: signature = "bad"
        case .keyMismatch: signature = "wrong_key"
        case .notChecked: signature = "not_checked"
        case .unsigned: signature = "unsigned"
        }
        let verdict: String
        switch report.verdict {
        case .accepted: verdict = "accepted"
        case .rejected: verdict = "rejected"
        case .depends: verdict = "depends"
        }
        return .object([
            ("hash", .string(hash)),
            ("computed_hash", report.computedHash.map { .string(Hex.encode($0)) } ?? .null),
            ("signature", .string(signature)),
            ("signature_detail", .string(report.signature.description)),
            ("bootloader", .string(verdict)),
            ("bootloader_detail", .string(report.verdict.description)),
            ("notes", .array(report.notes.map { .string($0) })),
        ])
    }
}
