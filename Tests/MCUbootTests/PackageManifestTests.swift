import Foundation
import MCUboot
import Testing

@Suite struct PackageManifestTests {
    @Test func readsTheNCSGeneratorDialect() throws {
        // scripts/bootloader/generate_zip.py: values are strings unless they started with 0x.
        let json = """
            {"format-version": 0, "time": 1700000000, "name": "nrf5340_audio", "files": [
              {"load_address": 49152, "image_index": "0", "slot_index_primary": "1", "slot_index_secondary": "2",
               "version_MCUBOOT": "1.2.3+4", "type": "application", "board": "nrf5340dk_nrf5340_cpuapp",
               "soc": "nRF5340_CPUAPP_QKAA", "size": 4759, "file": "app_update.bin", "modtime": 1700000001}]}
            """
        let manifest = try PackageManifest(json: Data(json.utf8))
        #expect(manifest.formatVersion == 0 && manifest.time == 1_700_000_000 && manifest.name == "nrf5340_audio")
        let file = try #require(manifest.files.first)
        #expect(file.file == "app_update.bin")
        #expect(file.imageIndex == 0 && file.slotIndexPrimary == 1 && file.slotIndexSecondary == 2)
        #expect(file.loadAddress == 0xc000)
        #expect(file.mcubootVersion == "1.2.3+4" && !file.isDirectXIP)
        #expect(file.type == "application" && file.board == "nrf5340dk_nrf5340_cpuapp")
        #expect(file.size == 4759 && file.modificationTime == 1_700_000_001)
    }

    @Test(arguments: [
        (#""load_address": 0x10000,"#, UInt64(0x10000)),
        (#""load_address": 0X1F000 ,"#, 0x1f000),
        (#""load_address": "0x20000","#, 0x20000),
        (#""load_address": "65536","#, 65536),
        (#""load_address": 4096,"#, 4096),
    ])
    func loadAddressInEveryForm(field: String, value: UInt64) throws {
        let json = #"{"files": [{"#.appending(field) + #""file": "a 0x10.bin"}]}"#
        let manifest = try PackageManifest(json: Data(json.utf8))
        #expect(manifest.files.first?.loadAddress == value)
        #expect(manifest.files.first?.file == "a 0x10.bin")
    }

    @Test func slotAndImageAsStringsOrNumbers() throws {
        let json = """
            {"files": [
              {"file": "a.bin", "image": 1, "slot": "1", "version_MCUBOOT+XIP": "2.0.0"},
              {"file": "b.bin", "image_index": 2, "slot": 3, "partition": "5"},
              {"file": "c.bin", "partition": 1, "type": "cache"}]}
            """
        let files = try PackageManifest(json: Data(json.utf8)).files
        #expect(
            files[0].imageIndex == 1 && files[0].slot == 1 && files[0].isDirectXIP && files[0].mcubootVersion == "2.0.0"
        )
        #expect(files[1].imageIndex == 2 && files[1].slot == 3 && files[1].partition == 5)
        #expect(files[2].imageIndex == nil && files[2].partition == 1 && files[2].type == "cache")
    }

    @Test func hexLiteralsInsideStringsAreLeftAlone() throws {
        let json = #"{"name": "v 0x12 \" 0x34", "files": [{"file": "0x1.bin", "load_address": 0xff}]}"#
        let manifest = try PackageManifest(json: Data(json.utf8))
        #expect(manifest.name == #"v 0x12 " 0x34"#)
        #expect(manifest.files.first?.file == "0x1.bin")
        #expect(manifest.files.first?.loadAddress == 255)
    }

    @Test(arguments: [
        ("not JSON", "{files: ["),
        ("not an object", "[1, 2]"),
        ("no files", #"{"format-version": 1}"#),
        ("files not an array", #"{"files": {}}"#),
        ("file entry not an object", #"{"files": [1]}"#),
        ("no file name", #"{"files": [{"image_index": "0"}]}"#),
        ("non-numeric image_index", #"{"files": [{"file": "a.bin", "image_index": "zero"}]}"#),
        ("negative slot", #"{"files": [{"file": "a.bin", "slot": -1}]}"#),
        ("fractional size", #"{"files": [{"file": "a.bin", "size": 1.5}]}"#),
        ("image out of range", #"{"files": [{"file": "a.bin", "image": 99999999999}]}"#),
        ("boolean load address", #"{"files": [{"file": "a.bin", "load_address": [1]}]}"#),
    ])
    func malformedManifestsAreInvalid(label: String, json: String) {
        let error = #expect(throws: MCUbootError.self, "\(label)") { try PackageManifest(json: Data(json.utf8)) }
        #expect(error?.code == .invalidManifest, "\(label)")
    }
}
