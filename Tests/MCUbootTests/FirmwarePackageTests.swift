import Foundation
import MCUboot
import SMPTestSupport
import Testing

@Suite struct FirmwarePackageTests {
    /// The hashes of the committed images, as imgtool reported them.
    static func hash(_ name: String) throws -> String {
        try #require(try Fixture.expected(name).digest ?? Fixture.image(name).hash.map { TestBytes.hex($0) })
    }

    struct Expectation: Equatable, CustomStringConvertible {
        var file: String
        var image: Int
        var slot: Int
        var hash: String
        var description: String { "\(file) image \(image) slot \(slot) \(hash.prefix(8))" }
    }

    static func summary(_ package: FirmwarePackage) -> [Expectation] {
        package.images.map {
            Expectation(file: $0.fileName, image: $0.imageIndex, slot: $0.slot, hash: TestBytes.hex($0.hash))
        }
    }

    @Test func aBareImageIsImageZeroSecondarySlot() throws {
        let package = try Fixture.package("ecdsa_p256_protected.bin")
        #expect(package.format == .image)
        #expect(
            Self.summary(package) == [
                Expectation(
                    file: "ecdsa_p256_protected.bin",
                    image: 0,
                    slot: 1,
                    hash: try Self.hash("ecdsa_p256_protected.bin")
                )
            ]
        )
        #expect(package.images.first?.version?.description == "1.2.3.7")
        #expect(package.images.first?.data == (try Fixture.data("ecdsa_p256_protected.bin")))
        #expect(!package.isDirectXIP && !package.isSUIT)
    }

    /// `dfu_application.zip` was written by Python's zipfile with deflate, as the SDK does.
    @Test func deflatedNCSZipResolvesBothCores() throws {
        let package = try Fixture.package("dfu_application.zip")
        #expect(package.format == .zip)
        #expect(
            Self.summary(package) == [
                Expectation(file: "app update.bin", image: 0, slot: 1, hash: try Self.hash("ecdsa_p256_protected.bin")),
                Expectation(file: "net_core_app_update.bin", image: 1, slot: 1, hash: try Self.hash("unsigned.bin")),
            ]
        )
        #expect(package.manifest?.name == "fixture")
        #expect(package.images[0].manifestEntry?.loadAddress == 0xc000)
        #expect(package.notes.isEmpty, "\(package.notes)")
        #expect(package.images[1].data == (try Fixture.data("unsigned.bin")))
    }

    /// One zip per manifest dialect: the manifest text, where the files go, and what must come out.
    static let dialects: [(String, String, [(String, String)], [Expectation])] = [
        (
            "NCS generate_zip.py, multi-image",
            #"""
            {"format-version": 0, "time": 1, "files": [
              {"load_address": 49152, "image_index": "0", "slot_index_primary": "1", "slot_index_secondary": "2",
               "version_MCUBOOT": "1.2.3+7", "type": "application", "board": "b", "soc": "s", "size": 1716,
               "file": "app_update.bin", "modtime": 1},
              {"load_address": 16777216, "image_index": "1", "slot_index_primary": "3", "slot_index_secondary": "4",
               "version": "1", "type": "application", "board": "n", "soc": "s", "size": 1576,
               "file": "net_core_app_update.bin", "modtime": 1}]}
            """#,
            [("app_update.bin", "ecdsa_p256_protected.bin"), ("net_core_app_update.bin", "unsigned.bin")],
            [
                Expectation(file: "app_update.bin", image: 0, slot: 1, hash: "ecdsa_p256_protected.bin"),
                Expectation(file: "net_core_app_update.bin", image: 1, slot: 1, hash: "unsigned.bin"),
            ]
        ),
        (
            "image as number, slot as string, hex literal load address",
            #"""
            {"format-version": 1, "time": 2, "files": [
              {"image": 1, "slot": "1", "load_address": 0x1000000, "type": "application", "file": "net.bin",
               "version_MCUBOOT": "2.0.0", "size": 1749, "modtime": 2, "board": "x", "soc": "y"}]}
            """#,
            [("net.bin", "ed25519_pure.bin")],
            [Expectation(file: "net.bin", image: 1, slot: 1, hash: "ed25519_pure.bin")]
        ),
        (
            "partition only, no slot",
            #"""
            {"files": [{"partition": "1", "file": "p1.bin"}, {"file": "p0.bin"}]}
            """#,
            [("p1.bin", "unsigned.bin"), ("p0.bin", "ecdsa_p256_protected.bin")],
            [
                Expectation(file: "p1.bin", image: 1, slot: 1, hash: "unsigned.bin"),
                Expectation(file: "p0.bin", image: 0, slot: 1, hash: "ecdsa_p256_protected.bin"),
            ]
        ),
        (
            "slot counted across images",
            #"""
            {"files": [{"image_index": 1, "slot": 3, "file": "net.bin"}, {"image_index": 0, "slot": "1", "file": "app.bin"}]}
            """#,
            [("net.bin", "unsigned.bin"), ("app.bin", "ed25519_pure.bin")],
            [
                Expectation(file: "net.bin", image: 1, slot: 1, hash: "unsigned.bin"),
                Expectation(file: "app.bin", image: 0, slot: 1, hash: "ed25519_pure.bin"),
            ]
        ),
        (
            "file names with spaces in a subfolder",
            #"""
            {"files": [{"image_index": "0", "file": "my app v1.bin"}]}
            """#,
            [("build output/my app v1.bin", "unsigned.bin")],
            [Expectation(file: "my app v1.bin", image: 0, slot: 1, hash: "unsigned.bin")]
        ),
        (
            "manifest and files in a folder",
            #"""
            {"files": [{"image_index": "0", "file": "zephyr.signed.bin"}, {"image_index": "1", "file": "net/zephyr.signed.bin"}]}
            """#,
            [("dfu/zephyr.signed.bin", "unsigned.bin"), ("dfu/net/zephyr.signed.bin", "padded_confirmed.bin")],
            [
                Expectation(file: "zephyr.signed.bin", image: 0, slot: 1, hash: "unsigned.bin"),
                Expectation(file: "net/zephyr.signed.bin", image: 1, slot: 1, hash: "padded_confirmed.bin"),
            ]
        ),
        (
            "DirectXIP with version_MCUBOOT+XIP",
            #"""
            {"format-version": 0, "time": 3, "files": [
              {"load_address": 65536, "version_MCUBOOT+XIP": "1.2.3+7", "image_index": "0", "slot": "0",
               "type": "application", "file": "zephyr.bin", "size": 1716, "modtime": 3, "board": "b", "soc": "s"},
              {"load_address": 524288, "image_index": "0", "slot": "1", "version_MCUBOOT+XIP": "1.2.3+7",
               "type": "application", "file": "mcuboot_secondary_app.bin", "size": 1576, "modtime": 3, "board": "b", "soc": "s"}]}
            """#,
            [("zephyr.bin", "ecdsa_p256_protected.bin"), ("mcuboot_secondary_app.bin", "unsigned.bin")],
            [
                Expectation(file: "zephyr.bin", image: 0, slot: 0, hash: "ecdsa_p256_protected.bin"),
                Expectation(file: "mcuboot_secondary_app.bin", image: 0, slot: 1, hash: "unsigned.bin"),
            ]
        ),
        (
            "DirectXIP by two slots per image, numeric",
            #"""
            {"files": [{"image": 0, "slot": 0, "file": "s0.bin"}, {"image": 0, "slot": 1, "file": "s1.bin"},
                       {"image": 1, "slot": 0, "file": "n0.bin"}, {"image": 1, "slot": 1, "file": "n1.bin"}]}
            """#,
            [
                ("s0.bin", "unsigned.bin"), ("s1.bin", "ecdsa_p256_protected.bin"), ("n0.bin", "ed25519_pure.bin"),
                ("n1.bin", "padded_confirmed.bin"),
            ],
            [
                Expectation(file: "s0.bin", image: 0, slot: 0, hash: "unsigned.bin"),
                Expectation(file: "s1.bin", image: 0, slot: 1, hash: "ecdsa_p256_protected.bin"),
                Expectation(file: "n0.bin", image: 1, slot: 0, hash: "ed25519_pure.bin"),
                Expectation(file: "n1.bin", image: 1, slot: 1, hash: "padded_confirmed.bin"),
            ]
        ),
    ]

    @Test(arguments: dialects)
    func everyManifestDialectResolves(
        label: String,
        manifest: String,
        files: [(String, String)],
        expected: [Expectation]
    ) throws {
        var zip = ZipBuilder()
        let folder = label.contains("in a folder") ? "dfu/" : ""
        zip.add(folder + "manifest.json", text: manifest)
        for (path, fixture) in files { zip.add(path, Array(try Fixture.data(fixture))) }
        let package = try FirmwarePackage(data: zip.data, fileName: "package.zip")
        let resolved = try expected.map { expectation in
            var copy = expectation
            copy.hash = try Self.hash(expectation.hash)
            return copy
        }
        #expect(Self.summary(package) == resolved, "\(label)")
        #expect(package.format == .zip)
        #expect(package.isDirectXIP == label.contains("DirectXIP"), "\(label)")
        #expect(package.notes.isEmpty, "\(label): \(package.notes)")
    }

    /// A deflated entry's declared size is a field of the file: it is checked against what the
    /// entry inflates to, never reserved up front — a 158-byte zip declaring 300 MB made the
    /// reader allocate 300 MB (found by fuzzing; `Fuzz/crashes/package-zip-declared-size-oom`).
    @Test func aDeflatedEntryIsCheckedAgainstItsDeclaredSize() throws {
        let manifest = Array(#"{"files": [{"file": "app.bin"}]}"#.utf8)
        for declared: UInt32 in [300_000_000, UInt32(manifest.count - 1)] {
            var zip = ZipBuilder()
            zip.add("manifest.json", manifest, declaredSize: declared, deflated: true)
            zip.add("app.bin", Array(try Fixture.data("unsigned.bin")))
            #expect("\(declared)") {
                try FirmwarePackage(data: zip.data, fileName: "big.zip")
            } throws: { error in
                (error as? MCUbootError)?.code == .invalidZip && "\(error)".contains("manifest.json in big.zip")
            }
        }
        var zip = ZipBuilder()
        zip.add("manifest.json", manifest, deflated: true)
        zip.add("app.bin", Array(try Fixture.data("unsigned.bin")))
        #expect(try FirmwarePackage(data: zip.data, fileName: "ok.zip").images.count == 1)
    }

    @Test func notesWhatTheManifestGetsWrong() throws {
        var zip = ZipBuilder()
        zip.add(
            "manifest.json",
            text:
                #"{"files": [{"file": "a.bin", "size": 5, "version_MCUBOOT": "9.9.9"}, {"file": "b.bin", "slot": 1}]}"#
        )
        zip.add("a.bin", Array(try Fixture.data("unsigned.bin")))
        zip.add("b.bin", Array(try Fixture.data("unsigned.bin")))
        let notes = try FirmwarePackage(data: zip.data).notes
        #expect(notes.contains("a.bin: manifest size 5 but the file has 1576 bytes"))
        #expect(notes.contains("a.bin: manifest version 9.9.9 but the image header says 1.2.3"))
        #expect(notes.contains("b.bin and a.bin both target image 0 slot 1"))
    }

    @Test func anImageEntryCanBeMadeFromAParsedImage() throws {
        let image = try Fixture.image("unsigned.bin")
        let entry = FirmwarePackage.Image(image, imageIndex: 1)
        #expect(entry.imageIndex == 1 && entry.slot == 1 && entry.content == .mcuboot)
        #expect(entry.hash == image.hash && entry.data == image.data && entry.version == image.header.version)
    }

    @Test func twoFilesForOneSlotAreNotDirectXIP() throws {
        var zip = ZipBuilder()
        zip.add("manifest.json", text: #"{"files": [{"file": "a.bin"}, {"file": "b.bin"}]}"#)
        zip.add("a.bin", Array(try Fixture.data("unsigned.bin")))
        zip.add("b.bin", Array(try Fixture.data("ed25519_pure.bin")))
        let package = try FirmwarePackage(data: zip.data)
        #expect(!package.isDirectXIP)
        #expect(package.notes == ["b.bin and a.bin both target image 0 slot 1"])
    }

    @Test func aSUITEnvelopeIsOneImageWithItsDigest() throws {
        let package = try Fixture.package("rfc9124_example0.suit")
        #expect(package.format == .suitEnvelope && package.isSUIT)
        #expect(
            Self.summary(package) == [
                Expectation(
                    file: "rfc9124_example0.suit",
                    image: 0,
                    slot: 0,
                    hash: "6658ea560262696dd1f13b782239a064da7c6c5cbaf52fded428a6fc83c7e5af"
                )
            ]
        )
        #expect(package.images.first?.content == .suitEnvelope)
        #expect(package.images.first?.suit?.sequenceNumber == 0)
    }

    @Test func aSUITZipHasEnvelopeCachesAndResources() throws {
        let envelope = TestCBOR.envelope(sequence: 7)
        var zip = ZipBuilder()
        zip.add(
            "manifest.json",
            text: #"""
                {"format-version": 1, "time": 4, "files": [
                  {"type": "bin", "file": "application.bin", "size": 4, "modtime": 4, "board": "b", "soc": "s"},
                  {"type": "cache", "partition": "2", "file": "dfu_cache_partition_2.bin"},
                  {"type": "cache", "file": "dfu_cache_partition_1.bin"},
                  {"type": "suit-envelope", "file": "root.suit", "board": "b", "soc": "s"}]}
                """#
        )
        zip.add("application.bin", [1, 2, 3, 4])
        zip.add("dfu_cache_partition_1.bin", [5, 6])
        zip.add("dfu_cache_partition_2.bin", [7])
        zip.add("root.suit", envelope.bytes)
        zip.add("radio.bin", [8, 9])
        let package = try FirmwarePackage(data: zip.data, fileName: "dfu_suit.zip")
        #expect(package.format == .suitZip && package.isSUIT)
        #expect(package.images.map(\.content) == [.suitEnvelope, .suitCache, .suitCache])
        #expect(package.images.map(\.imageIndex) == [0, 2, 1])
        #expect(package.images.first?.hash == envelope.digest)
        #expect(package.images[1].data == Data([7]))
        #expect(package.resource(named: "file://application.bin")?.data == Data([1, 2, 3, 4]))
        #expect(package.resource(named: "RADIO.BIN")?.data == Data([8, 9]))
        #expect(package.resource(named: "root.suit") == nil)
    }

    @Test(arguments: [
        ("dfu.zip", "unsigned.bin"), ("image.bin", "dfu_application.zip"), ("a.suit", "unsigned.bin"),
        ("x", "rfc9124_example0.suit"),
    ])
    func theFormatComesFromTheContentNotTheName(name: String, fixture: String) throws {
        let package = try FirmwarePackage(data: Fixture.data(fixture), fileName: name)
        let expected: FirmwarePackage.Format =
            fixture.hasSuffix(".zip") ? .zip : fixture.hasSuffix(".suit") ? .suitEnvelope : .image
        #expect(package.format == expected)
    }

    // MARK: - Malformed packages

    static func zip(_ entries: [(String, [UInt8])]) -> Data {
        var zip = ZipBuilder()
        for (path, bytes) in entries { zip.add(path, bytes) }
        return zip.data
    }

    static func image(_ name: String) -> [UInt8] { (try? Array(Fixture.data(name))) ?? [] }

    static let malformed: [(String, @Sendable () -> Data, MCUbootError.Code)] = [
        ("empty file", { Data() }, .unsupportedPackage),
        ("Intel HEX", { Data(":10000000".utf8) }, .unsupportedPackage),
        (
            "zip signature then garbage", { Data([0x50, 0x4b, 0x03, 0x04] + [UInt8](repeating: 0x11, count: 60)) },
            .invalidZip
        ),
        ("zip without manifest", { zip([("app.bin", image("unsigned.bin"))]) }, .manifestMissing),
        (
            // Found by fuzzing: the archive reader leaked what it had opened for such a file.
            "end record announcing a comment past the end",
            {
                var data = ZipBuilder().data
                let commentLength = data.count - 2  // the end record's last field
                data[commentLength] = 0x10
                return data
            },
            .invalidZip
        ),
        ("empty zip", { ZipBuilder().data }, .manifestMissing),
        (
            "manifest naming a missing file",
            { zip([("manifest.json", Array(#"{"files": [{"file": "app.bin"}]}"#.utf8))]) }, .missingFile
        ),
        ("manifest not JSON", { zip([("manifest.json", Array("{".utf8))]) }, .invalidManifest),
        ("manifest without files", { zip([("manifest.json", Array(#"{"files": []}"#.utf8))]) }, .invalidManifest),
        (
            "ambiguous file name",
            {
                zip([
                    ("manifest.json", Array(#"{"files": [{"file": "app.bin"}]}"#.utf8)),
                    ("a/app.bin", image("unsigned.bin")),
                    ("b/app.bin", image("unsigned.bin")),
                ])
            },
            .invalidManifest
        ),
        (
            "listed file is not an image",
            { zip([("manifest.json", Array(#"{"files": [{"file": "app.bin"}]}"#.utf8)), ("app.bin", [1, 2, 3])]) },
            .truncatedHeader
        ),
        (
            "listed image truncated",
            {
                zip([
                    ("manifest.json", Array(#"{"files": [{"file": "app.bin"}]}"#.utf8)),
                    ("app.bin", Array(image("unsigned.bin").prefix(0x610))),
                ])
            },
            .truncatedImage
        ),
        (
            "image without hash TLV",
            {
                var bytes = image("unsigned.bin")
                bytes[0x604] = 0xa1
                return Data(bytes)
            },
            .hashNotFound
        ),
        (
            "SUIT envelope without digest",
            { Data(TestCBOR.tag(107, TestCBOR.map([(TestCBOR.int(3), TestCBOR.bytes([0xa0]))]))) }, .suitDigestMissing
        ),
        (
            "SUIT zip without envelope file",
            { zip([("manifest.json", Array(#"{"files": [{"file": "root.suit", "type": "suit-envelope"}]}"#.utf8))]) },
            .missingFile
        ),
        (
            "SUIT zip envelope without digest",
            {
                zip([
                    ("manifest.json", Array(#"{"files": [{"file": "root.suit", "type": "suit-envelope"}]}"#.utf8)),
                    ("root.suit", TestCBOR.tag(107, TestCBOR.map([]))),
                ])
            },
            .suitDigestMissing
        ),
        (
            "entry larger than its declared size",
            {
                var zip = ZipBuilder()
                zip.add("manifest.json", text: #"{"files": [{"file": "app.bin"}]}"#)
                zip.add("app.bin", image("unsigned.bin"), declaredSize: 100)
                return zip.data
            },
            .invalidZip
        ),
        (
            "entry declaring 3 GiB",
            {
                var zip = ZipBuilder()
                zip.add("manifest.json", text: #"{"files": [{"file": "app.bin"}]}"#)
                zip.add("app.bin", image("unsigned.bin"), declaredSize: 3 << 30)
                return zip.data
            },
            .invalidZip
        ),
        (
            "cache without partition",
            {
                zip([
                    (
                        "manifest.json",
                        Array(
                            #"{"files": [{"file": "root.suit", "type": "suit-envelope"}, {"file": "cache.bin", "type": "cache"}]}"#
                                .utf8
                        )
                    ),
                    ("root.suit", TestCBOR.envelope(sequence: 1).bytes), ("cache.bin", [1]),
                ])
            },
            .invalidManifest
        ),
    ]

    @Test(arguments: malformed)
    func malformedPackagesGiveSpecificErrors(label: String, make: @Sendable () -> Data, code: MCUbootError.Code) {
        let error = #expect(throws: MCUbootError.self, "\(label)") {
            try FirmwarePackage(data: make(), fileName: "p.zip")
        }
        #expect(error?.code == code, "\(label): \(error.map { "\($0)" } ?? "")")
        #expect(error?.message.isEmpty == false)
    }

    @Test func errorsInsideAZipNameTheFile() throws {
        let data = Self.zip([
            ("manifest.json", Array(#"{"files": [{"file": "app core.bin"}]}"#.utf8)), ("app core.bin", [0x3d, 0xb8]),
        ])
        let error = #expect(throws: MCUbootError.self) { try FirmwarePackage(data: data) }
        #expect(error?.message.hasPrefix("app core.bin: ") == true)
    }

    @Test func randomlyCorruptedZipsNeverCrash() throws {
        let original = Array(try Fixture.data("dfu_application.zip"))
        var generator = TestBytes.SeededGenerator(seed: 0x5a49_50)
        for _ in 0..<300 {
            var bytes = original
            let index = Int.random(in: 0..<bytes.count, using: &generator)
            bytes[index] = UInt8.random(in: 0...255, using: &generator)
            _ = try? FirmwarePackage(data: Data(bytes))
        }
    }
}
