import Foundation
import MCUboot
import MCUmgr
import MCUmgrDFU
import SMPBytes
import SMPCore

/// What `mcumgr upgrade` prints of a plan and of a finished upgrade, as text and as JSON.
enum UpgradeReport {
    static func text(_ plan: FirmwareUpgradePlan) -> [String] {
        var lines = ["plan (\(plan.mode)\(plan.bootloaderMode.map { ", bootloader mode \($0)" } ?? "")):"]
        for image in plan.images {
            lines.append("  image \(image.imageIndex) \(image.version ?? "?"): \(image.action) — \(image.reason)")
        }
        lines.append(
            "  steps: " + (plan.steps.isEmpty ? "none" : plan.steps.map(\.description).joined(separator: ", "))
        )
        return lines
    }

    static func json(_ plan: FirmwareUpgradePlan) -> JSONValue {
        .object([
            ("event", .string("plan")),
            ("mode", .string(plan.mode.rawValue)),
            ("bootloader_mode", plan.bootloaderMode.map { .int(Int64($0.rawValue)) } ?? .null),
            (
                "images",
                .array(
                    plan.images.map { image in
                        .object([
                            ("image", .int(Int64(image.imageIndex))), ("slot", .int(Int64(image.slot))),
                            ("version", image.version.map { .string($0) } ?? .null),
                            ("hash", .string(Hex.encode(image.hash))),
                            ("action", .string(image.action.rawValue)), ("reason", .string(image.reason)),
                        ])
                    }
                )
            ),
            ("steps", .array(plan.steps.map { .string($0.description) })),
            ("warnings", .array(plan.warnings.map { .string($0) })),
        ])
    }

    /// The summary: one line on what happened, downgrades, the slots before and after, and the
    /// commands that finish the job.
    static func text(_ summary: FirmwareUpgrade.Summary, file: String, hints: CommandHints) -> [String] {
        var lines: [String] = []
        if summary.isUpToDate {
            // Upload-only is content with the image in a slot.
            let runs =
                summary.plan?.images.allSatisfy { image in
                    summary.after.contains { $0.isActive && $0.hash.map(Array.init) == image.hash }
                } ?? true
            lines.append("\(file): \(runs ? "the device already runs it" : "already on the device"); nothing to do")
        } else {
            lines.append(doneLine(summary, file: file))
        }
        lines += downgrades(summary)
        if !summary.before.isEmpty {
            lines.append("before:")
            lines += ImageCommands.text(.init(images: summary.before)).map { "  " + $0 }
        }
        if !summary.after.isEmpty {
            lines.append("after:")
            lines += ImageCommands.text(.init(images: summary.after)).map { "  " + $0 }
        }
        let next = nextSteps(summary, hints: hints)
        return lines + next + (next.isEmpty ? [] : [hints.simulatorNote].compactMap { $0 })
    }

    /// What a run that did something did, in its own verb: a run that uploaded nothing (the image
    /// was on the device) only confirmed or marked it, and says so rather than "0 B uploaded".
    static func doneLine(_ summary: FirmwareUpgrade.Summary, file: String) -> String {
        let steps = summary.plan?.steps ?? []
        let mode = summary.plan?.mode.rawValue ?? "?"
        let took = TransferProgressView.duration(summary.duration)
        let uploads = steps.contains {
            switch $0 {
            case .upload, .suitUploadEnvelope, .suitUploadCache: true
            default: false
            }
        }
        guard uploads || summary.uploadedBytes > 0 else {
            let confirms = steps.contains { if case .confirm = $0 { true } else { false } }
            let tests = steps.contains { if case .test = $0 { true } else { false } }
            let done = confirms ? "confirmed" : tests ? "marked for test" : "upgraded"
            return "\(file): \(done) in \(took) (the image was already on the device, nothing uploaded; mode \(mode))"
        }
        // Upload-only changes nothing the bootloader acts on: an upload, not an upgrade.
        let done = summary.plan?.resets == false && !summary.reverted ? "uploaded" : "upgraded"
        return
            "\(file): \(done) in \(took) (\(TransferProgressView.bytes(summary.uploadedBytes)) uploaded, mode \(mode))"
    }

    /// The images the upgrade took to an older version than the one the device ran, named as
    /// downgrades (a device without downgrade prevention takes them without a word).
    static func downgrades(_ summary: FirmwareUpgrade.Summary) -> [String] {
        guard let plan = summary.plan, !summary.isUpToDate else { return [] }
        return plan.images.compactMap { image in
            let running = summary.before.first { Int($0.imageNumber) == image.imageIndex && $0.isActive }
            guard image.action != .skip, let version = image.version, let running,
                let new = ImageVersion(version), let old = ImageVersion(running.version), new < old
            else { return nil }
            return "image \(image.imageIndex): a downgrade, from \(running.version) to \(version)"
        }
    }

    /// What the device is left with when the mode stops short of a confirmed image, and the
    /// command that finishes the job.
    static func nextSteps(_ summary: FirmwareUpgrade.Summary, hints: CommandHints) -> [String] {
        // Also when there was nothing to do: a second test-only run leaves the image as unconfirmed
        // as the first, and the reminder is as true as it was.
        guard let plan = summary.plan else { return [] }
        var lines: [String] = []
        for image in plan.images where image.action != .skip || summary.isUpToDate {
            let hash = Data(image.hash)
            let slots = summary.after.filter { $0.hash == hash && Int($0.imageNumber) == image.imageIndex }
            let version = image.version ?? slots.first?.version ?? "the new image"
            let hex = Hex.encode(image.hash)
            switch plan.mode {
            case .uploadOnly:
                guard let slot = slots.first(where: { !$0.isActive }) else { continue }
                lines.append(
                    "image \(image.imageIndex): \(version) uploaded to slot \(slot.slot), not marked; run "
                        + "`\(hints.command("image test \(hex)"))` (one boot, reverts unless confirmed) or "
                        + "`\(hints.command("image confirm \(hex)"))` (permanent), then `\(hints.command("os reset"))`"
                )
            case .testOnly:
                guard slots.contains(where: { $0.isActive && !$0.isConfirmed }) else { continue }
                lines.append(
                    "image \(image.imageIndex): running \(version) in test mode: confirm it "
                        + "(`\(hints.command("image confirm \(hex)"))`) or it reverts at the next reset"
                )
            default:
                continue
            }
        }
        return lines
    }

    /// An upgrade refused because a reset would act on something nobody asked for, said with the
    /// commands that clear the way (the user's own `--conn`), as one line.
    static func slotHeld(
        _ error: FirmwareUpgradeError,
        mode: FirmwareUpgrade.Mode,
        hints: CommandHints
    ) -> FirmwareUpgradeError {
        let changes = error.pendingBootChanges
        var text = hints.waysOut(changes, then: "run the upgrade again")
        if changes.allSatisfy({ $0.kind == .revert }) && mode != .uploadOnly {
            text += " (or add --revert-pending to let it revert first)"
        }
        var refused = error
        refused.message = text
        return refused
    }

    static func json(_ summary: FirmwareUpgrade.Summary) throws -> JSONValue {
        func slots(_ states: [ImageManagement.SlotState]) throws -> JSONValue {
            if case .object(let members) = try ImageCommands.json(.init(images: states)), let images = members.first?.1
            {
                return images
            }
            return .array([])
        }
        return .object([
            ("event", .string("completed")),
            ("up_to_date", .bool(summary.isUpToDate)),
            ("mode", summary.plan.map { .string($0.mode.rawValue) } ?? .null),
            ("bootloader", summary.bootloaderName.map { .string($0) } ?? .null),
            ("bootloader_mode", summary.bootloaderMode.map { .int(Int64($0.rawValue)) } ?? .null),
            ("uploaded_bytes", .int(Int64(summary.uploadedBytes))),
            ("seconds", .double((TransferProgressView.seconds(summary.duration) * 1000).rounded() / 1000)),
            ("before", try slots(summary.before)),
            ("after", try slots(summary.after)),
        ])
    }
}
