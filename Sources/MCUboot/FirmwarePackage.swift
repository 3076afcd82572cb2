import Foundation
import ZIPFoundation

/// A firmware package as users receive it: a bare MCUboot image (`.bin`), a zip with
/// `manifest.json` (nRF Connect SDK `dfu_application.zip`, multi-image and DirectXIP included),
/// a SUIT envelope (`.suit`), or a SUIT zip (envelope plus cache images and resources).
///
/// The format is decided by content (zip signature, CBOR tag 107, image magic), not only by the
/// file name. Every image comes out with what an upgrade needs: image number, target slot,
/// bytes to upload and the hash the device will report.
///
/// The package parses bytes and reads no file: `MCUmgrDFU` adds `init(contentsOf:)`, which reads
/// one (regular files and pipes alike) and parses it.
///
/// ```swift
/// let package = try FirmwarePackage(data: bytes, fileName: "dfu_application.zip")
/// for image in package.images {
///     print(image.imageIndex, image.slot, Hex.encode(image.hash), image.data.count)
/// }
/// ```
public struct FirmwarePackage: Sendable {
    /// What kind of file the package is.
    public enum Format: String, Sendable, Hashable, CustomStringConvertible {
        /// One MCUboot image.
        case image
        /// A zip with `manifest.json` listing MCUboot images.
        case zip
        /// One SUIT envelope.
        case suitEnvelope = "suit"
        /// A zip with `manifest.json` listing a SUIT envelope, cache images and resources.
        case suitZip = "suit-zip"

        public var description: String { rawValue }
    }

    /// What one image of the package holds.
    public enum Content: String, Sendable, Hashable, CustomStringConvertible {
        /// An MCUboot image: upload with the image group; ``Image/hash`` is its TLV hash.
        case mcuboot
        /// A SUIT envelope: upload with the SUIT group; ``Image/hash`` is the manifest digest.
        case suitEnvelope = "suit-envelope"
        /// A SUIT cache partition image (raw, no hash); ``Image/imageIndex`` is the cache partition.
        case suitCache = "cache"

        public var description: String { rawValue }
    }

    /// One image to upload.
    public struct Image: Sendable {
        /// The image number (`image` in SMP): 0 application core, 1 network core, …; for a SUIT
        /// cache, the cache partition (`target_id`).
        public var imageIndex: Int
        /// The slot to upload into within the image: 1 (secondary) normally; with DirectXIP, the
        /// slot this build is linked for (0 or 1).
        public var slot: Int
        /// The file's name in the package (the package's own name for a bare image).
        public var fileName: String
        /// What the image holds.
        public var content: Content
        /// The bytes to upload.
        public var data: Data
        /// The hash the device reports for the image once uploaded (MCUboot: the SHA TLV; SUIT: the
        /// manifest digest); empty for SUIT cache images.
        public var hash: [UInt8]
        /// The parsed MCUboot image, for ``Content/mcuboot``.
        public var mcuboot: MCUbootImage?
        /// The parsed envelope, for ``Content/suitEnvelope``.
        public var suit: SUITEnvelope?
        /// The manifest entry the image came from, for zips.
        public var manifestEntry: PackageManifest.File?

        /// The image version from the MCUboot header (`nil` for SUIT content).
        public var version: ImageVersion?

        /// Creates an image entry (packages make these; tests and tools may too).
        /// - Parameters:
        ///   - imageIndex: the image number.
        ///   - slot: the target slot within the image.
        ///   - fileName: the file's name.
        ///   - content: what the bytes are.
        ///   - data: the bytes to upload.
        ///   - hash: the hash the device will report.
        ///   - mcuboot: the parsed MCUboot image, if any.
        ///   - suit: the parsed SUIT envelope, if any.
        ///   - manifestEntry: the manifest entry, if any.
        public init(
            imageIndex: Int,
            slot: Int,
            fileName: String,
            content: Content,
            data: Data,
            hash: [UInt8],
            mcuboot: MCUbootImage? = nil,
            suit: SUITEnvelope? = nil,
            manifestEntry: PackageManifest.File? = nil
        ) {
            self.imageIndex = imageIndex
            self.slot = slot
            self.fileName = fileName
            self.content = content
            self.data = data
            self.hash = hash
            self.mcuboot = mcuboot
            self.suit = suit
            self.manifestEntry = manifestEntry
            // Stored rather than computed: an optional chain through `mcuboot` in a computed
            // property crashed the Swift 6.3.1 optimizer (ownership verifier) in async callers.
            version = mcuboot?.header.version
        }

        /// Creates the entry for a parsed MCUboot image: content `.mcuboot`, its bytes and TLV hash.
        /// - Parameters:
        ///   - image: the parsed image.
        ///   - imageIndex: the image number (default 0).
        ///   - slot: the target slot (default 1, the secondary slot).
        ///   - fileName: a name for messages.
        public init(_ image: MCUbootImage, imageIndex: Int = 0, slot: Int = 1, fileName: String = "image.bin") {
            self.init(
                imageIndex: imageIndex,
                slot: slot,
                fileName: fileName,
                content: .mcuboot,
                data: image.data,
                hash: image.hash ?? [],
                mcuboot: image
            )
        }
    }

    /// A file in a SUIT package that the device may request during installation.
    public struct Resource: Sendable {
        /// The file's name (the device asks for `file://NAME`).
        public var name: String
        /// Its bytes.
        public var data: Data
    }

    /// The package format.
    public let format: Format
    /// The images, in manifest order (for SUIT zips the envelope first, then the caches).
    public let images: [Image]
    /// Other files of a SUIT zip, which the device may fetch by name.
    public let resources: [Resource]
    /// The parsed `manifest.json`, for zips.
    public let manifest: PackageManifest?
    /// Inconsistencies worth telling a person that do not make the package unusable (a manifest
    /// size or version that disagrees with the image, for example).
    public let notes: [String]

    /// Whether the package targets a DirectXIP bootloader: an entry marked `version_MCUBOOT+XIP`,
    /// or one image number listed for both slots.
    public var isDirectXIP: Bool {
        if images.contains(where: { $0.manifestEntry?.isDirectXIP == true }) { return true }
        let mcuboot = images.filter { $0.content == .mcuboot }
        return mcuboot.contains { image in
            image.slot == 0 && mcuboot.contains { $0.imageIndex == image.imageIndex && $0.slot == 1 }
        }
    }

    /// Whether the package is for a SUIT bootloader.
    public var isSUIT: Bool { format == .suitEnvelope || format == .suitZip }

    /// A resource by name, compared case-insensitively (as the device's `file://` names are).
    /// - Parameter name: the name, with or without `file://`.
    public func resource(named name: String) -> Resource? {
        let bare = name.hasPrefix("file://") ? String(name.dropFirst(7)) : name
        return resources.first { $0.name.lowercased() == bare.lowercased() }
            ?? resources.first { ($0.name as NSString).lastPathComponent.lowercased() == bare.lowercased() }
    }

    /// Parses a package from its bytes.
    /// - Parameters:
    ///   - data: the file's bytes.
    ///   - fileName: the file's name, used in messages and as the image's name for a bare image.
    /// - Throws: ``MCUbootError``: ``MCUbootError/Code/unsupportedPackage`` for unknown content, the
    ///   image parse errors for each image, ``MCUbootError/Code/hashNotFound`` for an image without a
    ///   hash TLV, and for zips ``MCUbootError/Code/invalidZip``, ``MCUbootError/Code/manifestMissing``,
    ///   ``MCUbootError/Code/invalidManifest``, ``MCUbootError/Code/missingFile``.
    public init(data: Data, fileName: String = "") throws(MCUbootError) {
        let name = fileName.isEmpty ? "image.bin" : fileName
        let head = Array(data.prefix(4))
        if head == [0x50, 0x4b, 0x03, 0x04] || head == [0x50, 0x4b, 0x05, 0x06] {
            self = try Self.zip(data, fileName: name)
        } else if SUITEnvelope.looksLikeEnvelope(head) {
            let envelope = try SUITEnvelope(data)
            self.init(
                format: .suitEnvelope,
                images: [Self.envelopeImage(envelope, fileName: name, entry: nil)],
                resources: [],
                manifest: nil,
                notes: Self.envelopeNotes(envelope, fileName: name)
            )
        } else if head == [0x3d, 0xb8, 0xf3, 0x96] || head == [0x3c, 0xb8, 0xf3, 0x96] {
            let image = try Self.mcubootImage(data, fileName: name, entry: nil)
            self.init(format: .image, images: [image], resources: [], manifest: nil, notes: [])
        } else {
            let shown = head.map {
                String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16)
            }
            let ext = (name as NSString).pathExtension.lowercased()
            throw MCUbootError(
                .unsupportedPackage,
                "\(name) starts with \(shown.joined(separator: " ")): not an MCUboot image (3d b8 f3 96), a zip "
                    + "(50 4b 03 04) or a SUIT envelope (d8 6b)"
                    + (ext == "hex" ? "; convert Intel HEX to binary first" : "")
                    + (data.isEmpty ? " (the file is empty)" : "")
            )
        }
    }

    // MARK: - Zip

    private init(format: Format, images: [Image], resources: [Resource], manifest: PackageManifest?, notes: [String]) {
        self.format = format
        self.images = images
        self.resources = resources
        self.manifest = manifest
        self.notes = notes
    }

    private static func zip(_ data: Data, fileName: String) throws(MCUbootError) -> FirmwarePackage {
        // ZIPFoundation's in-memory reader traps when an offset points past the end of the data,
        // so every offset it will follow is checked here first.
        try checkZipStructure(data, zipName: fileName)
        let archive: Archive
        do {
            archive = try Archive(data: data, accessMode: .read)
        } catch {
            throw MCUbootError(.invalidZip, "\(fileName) cannot be opened as a zip archive", cause: error)
        }
        let entries = Array(archive).filter { $0.type == .file && !$0.path.hasPrefix("__MACOSX/") }
        let manifests = entries.filter { lastComponent($0.path) == "manifest.json" }
            .sorted { $0.path.split(separator: "/").count < $1.path.split(separator: "/").count }
        guard let manifestEntry = manifests.first else {
            throw MCUbootError(
                .manifestMissing,
                "\(fileName) has no manifest.json (entries: "
                    + entries.prefix(8).map(\.path).joined(separator: ", ") + ")"
            )
        }
        let manifest = try PackageManifest(json: Self.extract(manifestEntry, from: archive, zipName: fileName))
        let base = String(manifestEntry.path.dropLast("manifest.json".count))
        guard !manifest.files.isEmpty else {
            throw MCUbootError(.invalidManifest, "manifest.json in \(fileName) lists no files")
        }

        var images: [Image] = []
        var notes: [String] = []
        var usedPaths: Set<String> = [manifestEntry.path]
        let isSUIT = manifest.files.contains { $0.type == "suit-envelope" }
        for file in manifest.files {
            let entry = try find(file.file, in: entries, base: base, zipName: fileName)
            usedPaths.insert(entry.path)
            let bytes = try extract(entry, from: archive, zipName: fileName)
            if let size = file.size, size != bytes.count {
                notes.append("\(file.file): manifest size \(size) but the file has \(bytes.count) bytes")
            }
            if isSUIT {
                switch file.type {
                case "suit-envelope":
                    let envelope = try Self.wrap(file.file) { () throws(MCUbootError) in try SUITEnvelope(bytes) }
                    images.append(Self.envelopeImage(envelope, fileName: file.file, entry: file))
                    notes += Self.envelopeNotes(envelope, fileName: file.file)
                case "cache":
                    guard let partition = file.partition ?? file.imageIndex ?? trailingNumber(file.file) else {
                        throw MCUbootError(
                            .invalidManifest,
                            "cache file \(file.file) has no \"partition\" and no partition number in its name"
                        )
                    }
                    images.append(
                        Image(
                            imageIndex: partition,
                            slot: 0,
                            fileName: file.file,
                            content: .suitCache,
                            data: bytes,
                            hash: [],
                            mcuboot: nil,
                            suit: nil,
                            manifestEntry: file
                        )
                    )
                default:
                    continue
                }
            } else {
                var image = try Self.mcubootImage(bytes, fileName: file.file, entry: file)
                image.imageIndex = imageIndex(of: file)
                image.slot = file.slot.map { $0 % 2 } ?? 1
                if let expected = file.mcubootVersion.flatMap({ ImageVersion($0) }), let actual = image.version,
                    expected != actual, expected.withoutBuild != actual
                {
                    notes.append("\(file.file): manifest version \(expected) but the image header says \(actual)")
                }
                images.append(image)
            }
        }
        var resources: [Resource] = []
        if isSUIT {
            guard images.contains(where: { $0.content == .suitEnvelope }) else {
                throw MCUbootError(.invalidManifest, "SUIT manifest.json in \(fileName) lists no suit-envelope")
            }
            // The envelope goes first; the device needs it before any cache.
            images.sort { $0.content == .suitEnvelope && $1.content != .suitEnvelope }
            for entry in entries where !usedPaths.contains(entry.path) {
                let bytes = try extract(entry, from: archive, zipName: fileName)
                let path = entry.path.hasPrefix(base) ? String(entry.path.dropFirst(base.count)) : entry.path
                resources.append(Resource(name: path, data: bytes))
            }
            for file in manifest.files where file.type != "suit-envelope" && file.type != "cache" {
                if let entry = try? Self.find(file.file, in: entries, base: base, zipName: fileName) {
                    resources.append(
                        Resource(name: file.file, data: try extract(entry, from: archive, zipName: fileName))
                    )
                }
            }
        } else {
            var seen: [String: String] = [:]
            for image in images {
                let key = "\(image.imageIndex)/\(image.slot)"
                if let other = seen[key] {
                    notes.append(
                        "\(image.fileName) and \(other) both target image \(image.imageIndex) slot \(image.slot)"
                    )
                }
                seen[key] = image.fileName
            }
        }
        return FirmwarePackage(
            format: isSUIT ? .suitZip : .zip,
            images: images,
            resources: resources,
            manifest: manifest,
            notes: notes
        )
    }

    private static func imageIndex(of file: PackageManifest.File) -> Int {
        if let index = file.imageIndex { return index }
        if let primary = file.slotIndexPrimary, primary > 0 { return (primary - 1) / 2 }
        if let partition = file.partition { return partition }
        return 0
    }

    private static func lastComponent(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }

    private static func trailingNumber(_ name: String) -> Int? {
        let stem = (lastComponent(name) as NSString).deletingPathExtension
        let digits = stem.reversed().prefix { $0.isNumber }
        return digits.isEmpty ? nil : Int(String(digits.reversed()))
    }

    /// Finds a manifest's file: next to manifest.json, at that exact path, or (uniquely) by name
    /// anywhere in the zip.
    private static func find(_ name: String, in entries: [Entry], base: String, zipName: String) throws(MCUbootError)
        -> Entry
    {
        let cleaned = name.hasPrefix("./") ? String(name.dropFirst(2)) : name
        if let entry = entries.first(where: { $0.path == base + cleaned }) { return entry }
        if let entry = entries.first(where: { $0.path == cleaned }) { return entry }
        let wanted = lastComponent(cleaned)
        let matches = entries.filter { lastComponent($0.path) == wanted }
        if matches.count == 1 { return matches[0] }
        if matches.count > 1 {
            let underBase = matches.filter { $0.path.hasPrefix(base) }
            if underBase.count == 1 { return underBase[0] }
            throw MCUbootError(
                .invalidManifest,
                "manifest.json names \(name), which matches several files in \(zipName): "
                    + matches.map(\.path).joined(separator: ", ")
            )
        }
        throw MCUbootError(.missingFile, "manifest.json names \"\(name)\" but \(zipName) has no such file")
    }

    private static func extract(_ entry: Entry, from archive: Archive, zipName: String) throws(MCUbootError) -> Data {
        let declared = Int(clamping: entry.uncompressedSize)
        guard declared <= maximumEntrySize else {
            throw MCUbootError(
                .invalidZip,
                "\(entry.path) in \(zipName) declares \(declared) bytes, more than any firmware image"
            )
        }
        // The declared size is a field of the file: reserving it up front let a 158-byte zip
        // allocate 300 MB (found by fuzzing). Memory follows what inflating really produces.
        var bytes = Data()
        bytes.reserveCapacity(min(declared, initialReservation))
        do {
            // A deflate stream that inflates past its declared size is cut off, not followed.
            _ = try archive.extract(entry, skipCRC32: false) { chunk in
                guard bytes.count + chunk.count <= declared else { throw OversizedEntry() }
                bytes.append(chunk)
            }
        } catch {
            throw MCUbootError(.invalidZip, "\(entry.path) in \(zipName) cannot be extracted", cause: error)
        }
        guard bytes.count == declared else {
            throw MCUbootError(
                .invalidZip,
                "\(entry.path) in \(zipName) declares \(declared) bytes but holds \(bytes.count)"
            )
        }
        return bytes
    }

    /// What an entry's buffer starts with (1 MiB, a typical application image); it grows as the
    /// entry inflates.
    static let initialReservation = 1 << 20

    /// The largest file a package may hold (512 MiB): far beyond any flash slot, small enough
    /// that a hostile size field cannot exhaust memory.
    static let maximumEntrySize = 512 * 1024 * 1024

    private struct OversizedEntry: Error, CustomStringConvertible {
        var description: String { "the entry inflates beyond its declared size" }
    }

    // MARK: - Images

    private static func wrap<T>(_ fileName: String, _ body: () throws(MCUbootError) -> T) throws(MCUbootError) -> T {
        do {
            return try body()
        } catch {
            throw MCUbootError(error.code, "\(fileName): \(error.message)", cause: error.cause)
        }
    }

    private static func mcubootImage(_ data: Data, fileName: String, entry: PackageManifest.File?) throws(MCUbootError)
        -> Image
    {
        let image = try wrap(fileName) { () throws(MCUbootError) in try MCUbootImage(data) }
        guard let hash = image.hash else {
            throw MCUbootError(
                .hashNotFound,
                "\(fileName): the image has no SHA-256/384/512 TLV, so no bootloader accepts it"
            )
        }
        return Image(
            imageIndex: 0,
            slot: 1,
            fileName: fileName,
            content: .mcuboot,
            data: image.data,
            hash: hash,
            mcuboot: image,
            suit: nil,
            manifestEntry: entry
        )
    }

    private static func envelopeImage(_ envelope: SUITEnvelope, fileName: String, entry: PackageManifest.File?)
        -> Image
    {
        Image(
            imageIndex: 0,
            slot: 0,
            fileName: fileName,
            content: .suitEnvelope,
            data: envelope.data,
            hash: envelope.digest,
            mcuboot: nil,
            suit: envelope,
            manifestEntry: entry
        )
    }

    private static func envelopeNotes(_ envelope: SUITEnvelope, fileName: String) -> [String] {
        envelope.isDigestValid == false ? ["\(fileName): the SUIT digest does not match the manifest"] : []
    }

    /// Walks the end-of-central-directory record, every central directory entry and every local
    /// header, checking that each offset and size the zip reader will follow lies inside the data.
    private static func checkZipStructure(_ data: Data, zipName: String) throws(MCUbootError) {
        let bytes = data.startIndex == 0 ? data : Data(data)
        func u16(_ at: Int) -> Int? {
            at >= 0 && at + 2 <= bytes.count ? Int(bytes[at]) | Int(bytes[at + 1]) << 8 : nil
        }
        func u32(_ at: Int) -> Int? {
            guard let low = u16(at), let high = u16(at + 2) else { return nil }
            return low | high << 16
        }
        func fail(_ why: String) -> MCUbootError { MCUbootError(.invalidZip, "\(zipName): \(why)") }
        // The end record is 22 bytes plus a comment of up to 65535 bytes.
        let lowest = max(0, bytes.count - 22 - 0xffff)
        var eocd: Int?
        var candidate = bytes.count - 22
        while candidate >= lowest {
            if u32(candidate) == 0x0605_4b50 {
                eocd = candidate
                break
            }
            candidate -= 1
        }
        guard let eocd, let count = u16(eocd + 10), let size = u32(eocd + 12), let start = u32(eocd + 16) else {
            throw fail("no end of central directory record")
        }
        if count == 0xffff || size == 0xffff_ffff || start == 0xffff_ffff {
            throw fail("ZIP64 archives are not supported for firmware packages")
        }
        // The comment the end record announces must be there: ZIPFoundation's reader fails on a
        // short one without releasing the archive it opened (a leak found by fuzzing).
        guard let commentLength = u16(eocd + 20), eocd + 22 + commentLength <= bytes.count else {
            throw fail("the end of central directory record announces a comment longer than the file")
        }
        guard start + size <= eocd else {
            throw fail("the central directory (0x\(String(start, radix: 16)), \(size) bytes) lies outside the archive")
        }
        var position = start
        for index in 0..<count {
            guard position + 46 <= start + size, u32(position) == 0x0201_4b50,
                let compressed = u32(position + 20), let uncompressed = u32(position + 24),
                let nameLength = u16(position + 28), let extraLength = u16(position + 30),
                let commentLength = u16(position + 32), let localOffset = u32(position + 42)
            else { throw fail("central directory entry \(index) is malformed") }
            if compressed == 0xffff_ffff || uncompressed == 0xffff_ffff || localOffset == 0xffff_ffff {
                throw fail("ZIP64 entries are not supported for firmware packages")
            }
            if u16(position + 10) == 0, compressed != uncompressed {
                throw fail("stored entry \(index) has \(compressed) bytes but declares \(uncompressed)")
            }
            guard localOffset + 30 <= bytes.count, u32(localOffset) == 0x0403_4b50,
                let localName = u16(localOffset + 26), let localExtra = u16(localOffset + 28),
                localOffset + 30 + localName + localExtra + compressed <= bytes.count
            else { throw fail("entry \(index) points to a local header or data outside the archive") }
            position += 46 + nameLength + extraLength + commentLength
        }
        guard position <= start + size else { throw fail("the central directory overruns its size") }
    }
}
