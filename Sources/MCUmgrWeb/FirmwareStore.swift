import Foundation
import HTTPTypes
import MCUboot

/// Firmware files the page uploaded, parsed, kept by id until an upgrade names one: the page
/// shows what `mcumgr image info` shows before anything is sent to a device.
actor FirmwareStore {
    /// A parsed file.
    struct Entry: Sendable {
        var name: String
        var package: FirmwarePackage
    }

    private var entries: [(id: String, entry: Entry)] = []
    private var next = 1
    /// Files kept; older ones are dropped (each may be up to the upload limit).
    private let capacity = 4

    /// Keeps a file.
    /// - Returns: its id.
    func add(_ entry: Entry) -> String {
        let id = "f\(next)"
        next += 1
        entries.append((id, entry))
        if entries.count > capacity { entries.removeFirst() }
        return id
    }

    /// A kept file.
    /// - Throws: `WebError` 404 when it was dropped or never sent.
    func entry(_ id: String) throws -> Entry {
        guard let entry = entries.first(where: { $0.id == id })?.entry else {
            throw WebError(.notFound, "no firmware file \(id) here; choose the file again")
        }
        return entry
    }
}
