// Fuzz target `smp-frame`: SMPHeader/SMPFrame parsing, the error envelope (SMPResponseStatus,
// SMPDeviceError) and the response decoder of every request type in Sources/SMPCore/Groups, plus
// the request decoder (what the simulated device runs on received frames).
//
// Input: byte 0 selects a request type; the rest is one frame. The frame is decoded as the
// answer to the request type its own header names (if any), and its payload is also decoded as
// the answer to, and as, the selected type (with the header rewritten to match), so every
// response decoder sees every payload shape libFuzzer finds.
// Properties: a parsed frame re-encodes to the same bytes; a parsed header re-encodes to the
// same 8 bytes (reserved bits kept).
import FuzzSupport
import Foundation
import SMPCBOR
import SMPCore

struct Entry: Sendable {
    let group: SMPGroup
    let command: UInt8
    let operation: SMPOperation
    let decodeResponse: @Sendable (SMPFrame) throws -> Void
    let decodeRequest: @Sendable (SMPFrame) throws -> Void
}

func entry<R: SMPRequest>(_ type: R.Type) -> Entry {
    Entry(
        group: R.group,
        command: R.command,
        operation: R.operation,
        decodeResponse: { frame in
            let response = try frame.decodeResponse(to: R.self)
            // The client logs and re-encodes answers (e.g. --json): exercise that too.
            _ = try? CBOREncoder().encodeToBytes(response)
        },
        decodeRequest: { frame in
            let request = try frame.decodeRequest(as: R.self)
            _ = try? request.encodePayload(options: .init())
        }
    )
}

/// Every request type in Sources/SMPCore/Groups (regenerate with the command in Fuzz/README.md).
let entries: [Entry] = [
    entry(CrashManagement.Trigger.self),
    entry(EnumerationManagement.GroupCount.self),
    entry(EnumerationManagement.ListGroups.self),
    entry(EnumerationManagement.GroupAtIndex.self),
    entry(EnumerationManagement.GroupDetails.self),
    entry(FileManagement.Download.self),
    entry(FileManagement.Upload.self),
    entry(FileManagement.Status.self),
    entry(FileManagement.Hash.self),
    entry(FileManagement.SupportedHashTypes.self),
    entry(FileManagement.Close.self),
    entry(ImageManagement.StateRead.self),
    entry(ImageManagement.StateWrite.self),
    entry(ImageManagement.Upload.self),
    entry(ImageManagement.Erase.self),
    entry(ImageManagement.SlotInfo.self),
    entry(LogManagement.Show.self),
    entry(LogManagement.Clear.self),
    entry(LogManagement.ModuleList.self),
    entry(LogManagement.LevelList.self),
    entry(LogManagement.List.self),
    entry(OSManagement.Echo.self),
    entry(OSManagement.ConsoleEchoControl.self),
    entry(OSManagement.TaskStatistics.self),
    entry(OSManagement.MemoryPoolStatistics.self),
    entry(OSManagement.DateTimeRead.self),
    entry(OSManagement.DateTimeWrite.self),
    entry(OSManagement.Reset.self),
    entry(OSManagement.MCUmgrParameters.self),
    entry(OSManagement.ApplicationInfo.self),
    entry(OSManagement.BootloaderInfo.self),
    entry(RunManagement.Test.self),
    entry(RunManagement.List.self),
    entry(SUITManagement.ManifestList.self),
    entry(SUITManagement.ManifestState.self),
    entry(SUITManagement.EnvelopeUpload.self),
    entry(SUITManagement.MissingImageState.self),
    entry(SUITManagement.MissingImageUpload.self),
    entry(SUITManagement.CacheRawUpload.self),
    entry(SUITManagement.Cleanup.self),
    entry(SettingsManagement.Read.self),
    entry(SettingsManagement.Write.self),
    entry(SettingsManagement.Delete.self),
    entry(SettingsManagement.Commit.self),
    entry(SettingsManagement.Load.self),
    entry(SettingsManagement.Save.self),
    entry(ShellManagement.Execute.self),
    entry(StatisticsManagement.GroupData.self),
    entry(StatisticsManagement.ListGroups.self),
    entry(TransportManagement.Connect.self),
    entry(TransportManagement.Disconnect.self),
    entry(TransportManagement.Status.self),
    entry(TransportManagement.ListTransports.self),
    entry(TransportManagement.Modes.self),
    entry(TransportManagement.ConfigDetails.self),
    entry(ZephyrBasicManagement.EraseStorage.self),
]

func exercise(_ error: any Error) {
    _ = String(describing: error)
    if let device = error as? SMPDeviceError {
        _ = device.codeName
        _ = device.returnCode
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let start, count >= 1 else { return 0 }
    let input = UnsafeBufferPointer(start: start, count: count)
    let selector = Int(input[0])
    let bytes = Array(input.dropFirst())

    if let header = try? SMPHeader(parsing: bytes) {
        check(header.bytes == Array(bytes.prefix(SMPHeader.size)), "header does not re-encode exactly")
        _ = header.operation.description
        _ = header.group.description
    }
    let frame: SMPFrame
    do {
        frame = try SMPFrame(parsing: bytes)
    } catch {
        exercise(error)
        return 0
    }
    check(frame.bytes == bytes, "frame bytes differ from the input")
    check(frame.header.bytes + frame.payload == bytes, "header + payload differ from the input")

    // The envelope on its own.
    if let value = try? frame.payloadValue() {
        do {
            try SMPResponseStatus.check(value, group: frame.header.group, command: frame.header.command)
        } catch {
            exercise(error)
        }
    }

    // As the answer to whatever its own header names.
    for entry in entries where entry.group == frame.header.group && entry.command == frame.header.command {
        do { try entry.decodeResponse(frame) } catch { exercise(error) }
        do { try entry.decodeRequest(frame) } catch { exercise(error) }
    }

    // As the answer to, and as, the selected request type.
    let selected = entries[selector % entries.count]
    for operation in [selected.operation.response, selected.operation] {
        guard let operation else { continue }
        let header = SMPHeader(
            version: frame.header.version,
            operation: operation,
            length: 0,
            group: selected.group,
            sequence: frame.header.sequence,
            command: selected.command
        )
        guard let rewritten = try? SMPFrame(header: header, payload: frame.payload) else { continue }
        do {
            if operation == selected.operation {
                try selected.decodeRequest(rewritten)
            } else {
                try selected.decodeResponse(rewritten)
            }
        } catch {
            exercise(error)
        }
    }
    return 0
}
