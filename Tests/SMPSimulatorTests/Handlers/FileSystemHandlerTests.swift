import Foundation
import MCUboot
import SMPCBOR
import SMPCore
import Testing

@testable import SMPSimulator

@Suite("FileSystemHandler")
struct FileSystemHandlerTests {
    static func upload(_ client: inout TestClient, _ name: String, _ content: [UInt8], chunk: Int = 100) async throws {
        var offset = 0
        repeat {
            let end = min(offset + chunk, content.count)
            let request = FileManagement.Upload(
                offset: UInt64(offset),
                data: Data(content[offset..<end]),
                name: name,
                length: offset == 0 ? UInt64(content.count) : nil
            )
            let response = try await client.send(request)
            #expect(response.offset == UInt64(end))
            offset = end
        } while offset < content.count
    }

    static func download(_ client: inout TestClient, _ name: String) async throws -> [UInt8] {
        var bytes: [UInt8] = []
        var length: UInt64?
        repeat {
            let response = try await client.send(FileManagement.Download(offset: UInt64(bytes.count), name: name))
            if bytes.isEmpty { length = response.length }
            if response.data.isEmpty { break }
            bytes += response.data
        } while UInt64(bytes.count) < (length ?? 0)
        return bytes
    }

    @Test("upload and download round trip at the mount point, in chunks smaller and larger than the buffer")
    func roundTrip() async throws {
        var client = try await TestClient(configuration: .init(bufferSize: 384))
        let content = (0..<2_500).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try await Self.upload(&client, "/lfs1/data.bin", content, chunk: 200)
        #expect(try await Self.download(&client, "/lfs1/data.bin") == content)
        #expect(try await client.send(FileManagement.Status(name: "/lfs1/data.bin")).length == 2_500)
        // Uploading again from 0 truncates.
        try await Self.upload(&client, "/lfs1/data.bin", [1, 2, 3])
        #expect(try await Self.download(&client, "/lfs1/data.bin") == [1, 2, 3])
        _ = try await client.send(FileManagement.Close())
    }

    @Test("hash: crc32 only by default (as observed); sha256 and unknown types are CHECKSUM_HASH_NOT_FOUND")
    func hash() async throws {
        var client = try await TestClient()
        let content = Array("123456789".utf8)
        try await Self.upload(&client, "/lfs1/check", content)
        let crc = try await client.send(FileManagement.Hash(name: "/lfs1/check"))
        #expect(crc.type == .crc32)
        #expect(crc.output == .checksum(0xCBF4_3926))
        #expect(crc.length == 9)
        let part = try await client.send(FileManagement.Hash(name: "/lfs1/check", type: .crc32, offset: 2, length: 3))
        // zlib.crc32(b"345")
        #expect(part.output == .checksum(0x34F5_B50F))
        #expect(part.offset == 2)
        for type in ["sha256", "md5"] {
            let refused = await deviceError {
                _ = try await client.send(FileManagement.Hash(name: "/lfs1/check", type: .init(rawValue: type)))
            }
            #expect(refused?.matches(FileManagement.ReturnCode.checksumHashNotFound) == true, "\(type)")
        }
        let types = try await client.send(FileManagement.SupportedHashTypes())
        #expect(types.types.names == ["crc32"])
        #expect(types.types["crc32"]?.size == 4)
    }

    @Test("hash: with CONFIG_MCUMGR_GRP_FS_HASH_SHA256, sha256 on request, with off and len, and listed")
    func hashSHA256() async throws {
        var client = try await TestClient(configuration: .init(fileHashSHA256: true))
        let content = Array("123456789".utf8)
        try await Self.upload(&client, "/lfs1/check", content)
        #expect(try await client.send(FileManagement.Hash(name: "/lfs1/check")).type == .crc32)
        let sha = try await client.send(FileManagement.Hash(name: "/lfs1/check", type: .sha256, offset: 2, length: 3))
        #expect(sha.output == .digest(Data(ImageHashAlgorithm.sha256.hash(Array("345".utf8)))))
        #expect(sha.offset == 2)
        let unknown = await deviceError {
            _ = try await client.send(FileManagement.Hash(name: "/lfs1/check", type: .init(rawValue: "md5")))
        }
        #expect(unknown?.matches(FileManagement.ReturnCode.checksumHashNotFound) == true)
        let types = try await client.send(FileManagement.SupportedHashTypes())
        #expect(types.types.names == ["crc32", "sha256"])
        #expect(types.types["sha256"]?.size == 32)
    }

    @Test("an upload at the wrong offset is FILE_OFFSET_NOT_VALID with the current length")
    func wrongOffset() async throws {
        var client = try await TestClient()
        _ = try await client.send(
            FileManagement.Upload(offset: 0, data: Data([1, 2, 3, 4]), name: "/lfs1/f", length: 10)
        )
        let error = await deviceError {
            _ = try await client.send(FileManagement.Upload(offset: 7, data: Data([5]), name: "/lfs1/f"))
        }
        #expect(error?.matches(FileManagement.ReturnCode.fileOffsetNotValid) == true)
        #expect(error?.payload?["len"] == 4)
    }

    @Test(
        "paths that leave the mount or are malformed are refused; the device keeps serving",
        arguments: [
            (
                "/lfs1/../../etc/passwd", FileManagement.ReturnCode.fileInvalidName,
                FileManagement.ReturnCode.fileInvalidName
            ),
            ("/lfs1/./x", .fileInvalidName, .fileInvalidName),
            ("relative.txt", .fileInvalidName, .fileInvalidName),
            ("/etc/passwd", .fileNotFound, .mountPointNotFound),
            ("/lfs1/no/such/dir/file", .fileNotFound, .mountPointNotFound),
            ("/lfs1", .fileIsDirectory, .unknown),
        ]
    )
    func badPaths(path: String, download: FileManagement.ReturnCode, upload: FileManagement.ReturnCode) async throws {
        var client = try await TestClient()
        let read = await deviceError { _ = try await client.send(FileManagement.Download(offset: 0, name: path)) }
        #expect(read?.matches(download) == true, "download \(path): \(String(describing: read))")
        let status = await deviceError { _ = try await client.send(FileManagement.Status(name: path)) }
        #expect(status?.matches(download) == true)
        let write = await deviceError {
            _ = try await client.send(FileManagement.Upload(offset: 0, data: Data([1]), name: path, length: 1))
        }
        #expect(write?.matches(upload) == true, "upload \(path): \(String(describing: write))")
        #expect(try await client.send(OSManagement.Echo(text: "still here")).text == "still here")
    }

    @Test(
        "wrong types and missing fields are EINVAL",
        arguments: [
            ["off": 0, "name": 3] as CBOR, ["name": "/lfs1/x"], ["off": "0", "name": "/lfs1/x"],
            ["off": 0, "name": ""],
            ["off": 0, "name": .textString("/lfs1/" + String(repeating: "a", count: 80))],
        ]
    )
    func badDownloads(request: CBOR) async throws {
        var client = try await TestClient()
        #expect(try await client.payload(group: .fileSystem, command: 0, operation: .read, request)["rc"] == 3)
    }

    @Test("upload at offset 0 without len is EINVAL")
    func uploadNeedsLength() async throws {
        var client = try await TestClient()
        let payload = try await client.payload(
            group: .fileSystem,
            command: 0,
            operation: .write,
            ["off": 0, "name": "/lfs1/x", "data": .byteString(Data([1]))]
        )
        #expect(payload["rc"] == 3)
    }

    static let check = "/lfs1/check"
    static let store: AnswerCase.Step = { client in try await upload(&client, check, Array("123456789".utf8)) }

    static let answers: [AnswerCase] = [
        AnswerCase(
            "upload",
            FileManagement.Upload(offset: 0, data: Data("1234".utf8), name: check, length: 9),
            [
                "bf",  // {_
                "636f666604",  //   "off": 4
                "ff",  // }
            ]
        ),
        AnswerCase(
            "status",
            before: store,
            FileManagement.Status(name: check),
            [
                "bf",  // {_
                "636c656e09",  //   "len": 9
                "ff",  // }
            ]
        ),
        AnswerCase(
            "download from 0: the length last",
            before: store,
            FileManagement.Download(offset: 0, name: check),
            [
                "bf",  // {_
                "636f666600",  //   "off": 0
                "646461746149313233343536373839",  //   "data": h'31323334…' (9 bytes)
                "636c656e09",  //   "len": 9
                "ff",  // }
            ]
        ),
        AnswerCase(
            "download further on",
            before: store,
            FileManagement.Download(offset: 4, name: check),
            [
                "bf",  // {_
                "636f666604",  //   "off": 4
                "6464617461453536373839",  //   "data": h'3536373839'
                "ff",  // }
            ]
        ),
        AnswerCase(
            "crc32",
            before: store,
            FileManagement.Hash(name: check),
            [
                "bf",  // {_
                "6474797065656372633332",  //   "type": "crc32"
                "636c656e09",  //   "len": 9
                "666f75747075741acbf43926",  //   "output": 3421780262
                "ff",  // }
            ]
        ),
        AnswerCase(
            "crc32 of a range: the offset written",
            before: store,
            FileManagement.Hash(name: check, type: .crc32, offset: 2, length: 3),
            [
                "bf",  // {_
                "6474797065656372633332",  //   "type": "crc32"
                "636f666602",  //   "off": 2
                "636c656e03",  //   "len": 3
                "666f75747075741a34f5b50f",  //   "output": 888517903
                "ff",  // }
            ]
        ),
        AnswerCase(
            "sha256",
            on: .init(fileHashSHA256: true),
            before: store,
            FileManagement.Hash(name: check, type: .sha256),
            [
                "bf",  // {_
                "647479706566736861323536",  //   "type": "sha256"
                "636c656e09",  //   "len": 9
                "666f7574707574582015e2b0d3c33891ebb0f1ef",  //   "output": h'15e2b0d3…' (32 bytes)
                "609ec419420c20e320ce94c65fbc8c3312448eb2",
                "25",
                "ff",  // }
            ]
        ),
        AnswerCase(
            "hash types",
            FileManagement.SupportedHashTypes(),
            [
                "bf",  // {_
                "657479706573",  //   "types":
                "bf",  //   {_
                "656372633332",  //     "crc32":
                "bf",  //     {_
                "66666f726d617400",  //       "format": 0
                "6473697a6504",  //       "size": 4
                "ff",  //     }
                "ff",  //   }
                "ff",  // }
            ]
        ),
        AnswerCase(
            "hash types with sha256",
            on: .init(fileHashSHA256: true),
            FileManagement.SupportedHashTypes(),
            [
                "bf",  // {_
                "657479706573",  //   "types":
                "bf",  //   {_
                "656372633332",  //     "crc32":
                "bf",  //     {_
                "66666f726d617400",  //       "format": 0
                "6473697a6504",  //       "size": 4
                "ff",  //     }
                "66736861323536",  //     "sha256":
                "bf",  //     {_
                "66666f726d617401",  //       "format": 1
                "6473697a651820",  //       "size": 32
                "ff",  //     }
                "ff",  //   }
                "ff",  // }
            ]
        ),
    ]

    @Test("answers byte for byte as Zephyr's fs_mgmt.c writes them", arguments: answers)
    func answerBytes(_ answer: AnswerCase) async throws {
        try await answer.check()
    }
}
