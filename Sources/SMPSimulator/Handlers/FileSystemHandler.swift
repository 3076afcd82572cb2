import Foundation
import MCUboot
import SMPCBOR
import SMPCore

/// Group 8, file system, following Zephyr's `fs_mgmt.c` over the ``FileSystemSandbox``.
enum FileSystemHandler {
    typealias Code = FileManagement.ReturnCode

    static let group = HandlerGroup(
        group: .fileSystem,
        name: "fs mgmt",
        routes: [
            Route(FileManagement.Download.self) { request, device, _ throws(HandlerFailure) in
                try download(request, device: &device)
            },
            Route(FileManagement.Upload.self) { request, device, _ throws(HandlerFailure) in
                try upload(request, device: &device)
            },
            Route(FileManagement.Status.self) { request, device, _ throws(HandlerFailure) in
                try status(request, device: device)
            },
            Route(FileManagement.Hash.self) { request, device, _ throws(HandlerFailure) in
                try hash(request, device: device)
            },
            Route(FileManagement.SupportedHashTypes.self) { _, device, _ in supportedHashes(device) },
            Route(FileManagement.Close.self) { _, device, _ in
                device.fileTransfer = nil
                return CBORMap()
            },
        ]
    )

    private static func fail(_ code: Code, extra: CBORMap = [:]) -> HandlerFailure {
        .group(.fileSystem, code.rawValue, extra: extra)
    }

    private static func checkName(_ name: String) throws(HandlerFailure) {
        guard !name.isEmpty, name.utf8.count <= FileSystemSandbox.maximumPathLength else {
            throw .management(.invalidValue)
        }
    }

    /// `fs_mgmt_filelen`: the size of an existing regular file, or the error Zephyr maps `fs_stat` to.
    private static func fileLength(_ name: String, device: DeviceCore) throws(HandlerFailure) -> (URL, Int) {
        switch device.files.resolve(name) {
        case .invalidName: throw fail(.fileInvalidName)
        case .noMountPoint: throw fail(.fileNotFound)
        case .inside(let url):
            switch device.files.entry(at: url) {
            case .missing: throw fail(.fileNotFound)
            case .directory: throw fail(.fileIsDirectory)
            case .file(let size): return (url, size)
            }
        }
    }

    /// The largest chunk a download answer carries so that the response fits a net buffer.
    static func downloadChunkSize(_ device: DeviceCore) -> Int {
        max(32, device.configuration.bufferSize - SMPHeader.size - 48)
    }

    static func download(_ request: SMPServerRequest, device: inout DeviceCore) throws(HandlerFailure) -> CBORMap {
        let download = try request.decode(FileManagement.Download.self)
        try checkName(download.name)
        if let transfer = device.fileTransfer, transfer.direction != .download || transfer.path != download.name {
            device.fileTransfer = nil
        }
        if device.fileTransfer == nil {
            let (url, size) = try fileLength(download.name, device: device)
            device.fileTransfer = .init(direction: .download, path: download.name, url: url, offset: 0, length: size)
        }
        guard let transfer = device.fileTransfer else { throw .management(.unknown) }
        let offset = Int(clamping: download.offset)
        guard let data = device.files.read(transfer.url, offset: offset, count: downloadChunkSize(device)) else {
            device.fileTransfer = nil
            throw fail(.fileReadFailed)
        }
        device.fileTransfer?.offset = offset + data.count
        if transfer.length > 0 && offset + data.count >= transfer.length { device.fileTransfer = nil }
        return CBORMap(
            response: FileManagement.Download.Response(
                offset: UInt64(offset),
                data: Data(data),
                length: offset == 0 ? UInt64(transfer.length) : nil
            )
        )
    }

    static func upload(_ request: SMPServerRequest, device: inout DeviceCore) throws(HandlerFailure) -> CBORMap {
        let upload = try request.decode(FileManagement.Upload.self)
        try checkName(upload.name)
        let offset = Int(clamping: upload.offset)
        guard offset != 0 || upload.length != nil else { throw .management(.invalidValue) }
        if let transfer = device.fileTransfer, transfer.direction != .upload || transfer.path != upload.name {
            device.fileTransfer = nil
        }
        if device.fileTransfer == nil {
            // fs_open(CREATE | WRITE)
            let url: URL
            switch device.files.resolve(upload.name) {
            case .invalidName: throw fail(.fileInvalidName)
            case .noMountPoint: throw fail(.mountPointNotFound)
            case .inside(let inside): url = inside
            }
            switch device.files.entry(at: url) {
            case .directory: throw fail(.unknown)
            case .missing:
                guard device.files.create(url, truncate: false) else { throw fail(.mountPointNotFound) }
            case .file: break
            }
            device.fileTransfer = .init(direction: .upload, path: upload.name, url: url, offset: 0, length: 0)
        }
        guard var transfer = device.fileTransfer else { throw .management(.unknown) }
        var existing = 0
        if offset == 0 {
            transfer.length = Int(clamping: upload.length ?? 0)
            existing = (try? fileLength(upload.name, device: device).1) ?? 0
        } else if transfer.offset == 0 {
            transfer.offset = (try? fileLength(upload.name, device: device).1) ?? 0
        }
        if offset > 0 && offset != transfer.offset {
            // The refusal carries the offset the device expects under `len`, a key of the error
            // answer alone (no response type has it in that sense).
            var extra = CBORMap()
            extra.put("len", transfer.offset)
            device.fileTransfer = nil
            throw fail(.fileOffsetNotValid, extra: extra)
        }
        if !upload.data.isEmpty {
            if offset == 0 && existing != 0 {
                guard device.files.create(transfer.url, truncate: true) else {
                    device.fileTransfer = nil
                    throw fail(.fileTruncateFailed)
                }
            }
            guard device.files.append(transfer.url, bytes: Array(upload.data)) else {
                device.fileTransfer = nil
                throw fail(.fileWriteFailed)
            }
            transfer.offset = offset + upload.data.count
        }
        device.fileTransfer = transfer
        if transfer.length > 0 && transfer.offset >= transfer.length { device.fileTransfer = nil }
        return CBORMap(response: FileManagement.Upload.Response(offset: UInt64(transfer.offset)))
    }

    static func status(_ request: SMPServerRequest, device: DeviceCore) throws(HandlerFailure) -> CBORMap {
        let status = try request.decode(FileManagement.Status.self)
        try checkName(status.name)
        let (_, size) = try fileLength(status.name, device: device)
        return CBORMap(response: FileManagement.Status.Response(length: UInt64(size)))
    }

    static func hash(_ request: SMPServerRequest, device: DeviceCore) throws(HandlerFailure) -> CBORMap {
        let hash = try request.decode(FileManagement.Hash.self)
        try checkName(hash.name)
        if hash.length == 0 { throw .management(.invalidValue) }
        let type = hash.type ?? .crc32
        guard type == .crc32 || (type == .sha256 && device.configuration.fileHashSHA256) else {
            throw fail(.checksumHashNotFound)
        }
        let (url, size) = try fileLength(hash.name, device: device)
        let offset = Int(clamping: hash.offset ?? 0)
        guard offset <= size else { throw fail(.fileOffsetLargerThanFile) }
        let count = min(size - offset, Int(clamping: hash.length ?? UInt64(Int.max)))
        guard size > 0 else { throw fail(.fileEmpty) }
        let bytes = device.files.read(url, offset: offset, count: count) ?? []
        return CBORMap(
            response: FileManagement.Hash.Response(
                type: type,
                offset: offset != 0 ? UInt64(offset) : nil,
                length: UInt64(bytes.count),
                output: type == .crc32
                    ? .checksum(UInt64(CRC32.checksum(bytes))) : .digest(Data(ImageHashAlgorithm.sha256.hash(bytes)))
            )
        )
    }

    /// The hash types built in: `crc32`, and `sha256` with `CONFIG_MCUMGR_GRP_FS_HASH_SHA256`.
    static func supportedHashes(_ device: DeviceCore) -> CBORMap {
        typealias TypeInfo = FileManagement.SupportedHashTypes.TypeInfo
        var types: SMPNamedValues<TypeInfo> = ["crc32": TypeInfo(format: TypeInfo.numericFormat, size: 4)]
        if device.configuration.fileHashSHA256 {
            types["sha256"] = TypeInfo(format: TypeInfo.byteArrayFormat, size: 32)
        }
        return CBORMap(response: FileManagement.SupportedHashTypes.Response(types: types))
    }
}

/// CRC-32 (IEEE 802.3, as zlib's `crc32`), what Zephyr's `crc32_ieee` computes.
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    static func checksum(_ bytes: some Sequence<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xff)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }
}
