import Foundation
import MCUboot
import SMPTestSupport

/// The committed fixtures (made by `Fixtures/make-fixtures.sh`) and what imgtool said about them.
enum Fixture {
    struct Missing: Error, CustomStringConvertible {
        let name: String
        var description: String { "fixture \(name) is not in the test bundle" }
    }

    static func url(_ name: String) throws -> URL {
        guard let url = Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Fixtures") else {
            throw Missing(name: name)
        }
        return url
    }

    static func data(_ name: String) throws -> Data {
        try Data(contentsOf: url(name))
    }

    /// A fixture parsed as a package under its own name (MCUboot reads no files itself).
    static func package(_ name: String) throws -> FirmwarePackage {
        try FirmwarePackage(data: data(name), fileName: name)
    }

    static func image(_ name: String) throws -> MCUbootImage {
        try MCUbootImage(data(name))
    }

    /// `expected.json`: imgtool's `dumpinfo -f json` and `verify` digest per committed image.
    static func expected(_ name: String) throws -> DumpInfo {
        let json = try JSONSerialization.jsonObject(with: data("expected.json")) as? [String: Any]
        guard let entry = json?[name] as? [String: Any] else { throw Missing(name: "expected.json[\(name)]") }
        return try DumpInfo(entry, digest: entry["digest"] as? String)
    }
}

/// What `imgtool dumpinfo -f json` reports about an image, reduced to what we compare.
struct DumpInfo: Equatable, CustomStringConvertible {
    struct TLV: Equatable {
        var type: UInt16
        var name: String
        var data: String
    }

    struct Malformed: Error, CustomStringConvertible {
        let what: String
        var description: String { "unexpected dumpinfo JSON: \(what)" }
    }

    var magic: UInt32
    var loadAddress: UInt32
    var headerSize: UInt16
    var protectedTLVSize: UInt16
    var imageSize: UInt32
    var flags: UInt32
    var version: String
    var protectedTLVs: [TLV]
    var protectedTotal: Int?
    var tlvs: [TLV]
    var tlvTotal: Int
    var trailerImageOK: Int?
    var trailerMagic: String?
    /// The digest `imgtool verify` printed (nil for pure-signed images, which print none).
    var digest: String?

    init(_ json: [String: Any], digest: String?) throws {
        guard let header = json["header"] as? [String: Any], let area = json["tlv_area"] as? [String: Any]
        else { throw Malformed(what: "no header or tlv_area") }
        func int(_ dict: [String: Any], _ key: String) throws -> Int {
            guard let value = dict[key] as? Int else { throw Malformed(what: key) }
            return value
        }
        func tlvList(_ key: String) throws -> [TLV] {
            try (area[key] as? [[String: Any]] ?? []).map {
                TLV(
                    type: UInt16(try int($0, "type")),
                    name: $0["type_name"] as? String ?? "",
                    data: $0["data"] as? String ?? ""
                )
            }
        }
        magic = UInt32(try int(header, "magic"))
        loadAddress = UInt32(try int(header, "load_addr"))
        headerSize = UInt16(try int(header, "hdr_size"))
        protectedTLVSize = UInt16(try int(header, "protected_tlv_size"))
        imageSize = UInt32(try int(header, "img_size"))
        flags = UInt32(try int(header, "flags"))
        version = header["version"] as? String ?? ""
        protectedTLVs = try tlvList("tlvs_prot")
        protectedTotal = (area["tlv_hdr_prot"] as? [String: Any])?["tlv_tot"] as? Int
        tlvs = try tlvList("tlvs")
        tlvTotal = try int(area["tlv_hdr"] as? [String: Any] ?? [:], "tlv_tot")
        let trailer = json["trailer"] as? [String: Any] ?? [:]
        trailerImageOK = trailer["image_ok"] as? Int
        trailerMagic = trailer["magic"] as? String
        self.digest = digest
    }

    /// The same facts, from our parser.
    init(_ image: MCUbootImage, digest: String?) {
        func tlv(_ record: ImageTLV) -> TLV {
            TLV(type: record.kind.rawValue, name: record.kind.name, data: TestBytes.hex(record.value))
        }
        let header = image.header
        magic = header.magic
        loadAddress = header.loadAddress
        headerSize = header.headerSize
        protectedTLVSize = header.protectedTLVSize
        imageSize = header.imageSize
        flags = header.flags.rawValue
        version = header.version.imgtoolDescription
        protectedTLVs = image.protectedTLVs.map(tlv)
        protectedTotal = image.protectedTLVArea?.count
        tlvs = image.tlvs.map(tlv)
        tlvTotal = image.tlvArea.count
        trailerImageOK = image.trailer?.imageOK.map(Int.init)
        trailerMagic = image.trailer?.magic == .good ? TestBytes.hex(ImageTrailer.bootMagic) : nil
        self.digest = digest
    }

    var description: String {
        "\(version) flags 0x\(String(flags, radix: 16)) prot \(protectedTLVs.map(\.name)) tlvs \(tlvs.map(\.name))"
    }
}
