import Foundation
import MCUmgr
import SMPCore

/// The guards around changing a device's image state (test, confirm, erase, upload), shared by
/// every front end — `mcumgr image` and `mcumgr ui` — so that both refuse the same things in the
/// same words: a hash prefix is resolved only when it names exactly one slot, and a device's
/// `NO_FREE_SLOT` is said with what holds the slot and the ways out, never acted on.
public enum ImageStateGuard {
    /// A request refused before anything was sent, or a device's refusal explained.
    public struct Refusal: Error, Sendable, CustomStringConvertible {
        /// Why the request was refused.
        public enum Kind: Sendable, Hashable {
            /// The input itself is unusable (a hash prefix too short): a usage error.
            case badInput
            /// The device's list does not allow it (no match, several matches).
            case notOnDevice
            /// The device refused, explained with what holds the slot.
            case deviceRefused
        }

        /// Why.
        public var kind: Kind
        /// One line for people: what was refused and what to do.
        public var description: String
        /// The device's own refusal, for ``Kind/deviceRefused``.
        public var cause: SMPDeviceError?

        /// Creates a refusal.
        /// - Parameters:
        ///   - kind: why.
        ///   - description: the line for people.
        ///   - cause: the device's refusal, if any.
        public init(_ kind: Kind, _ description: String, cause: SMPDeviceError? = nil) {
            self.kind = kind
            self.description = description
            self.cause = cause
        }
    }

    /// A full hash, or a prefix resolved against the device's image list (at least 4 hex digits,
    /// matching exactly one slot).
    /// - Parameters:
    ///   - bytes: the hash or its prefix, as parsed from the user's hex.
    ///   - client: the connection, read only when `bytes` is a prefix.
    /// - Returns: the full hash.
    /// - Throws: ``Refusal`` for a prefix too short, matching nothing or matching several images;
    ///   the client's error when the list cannot be read.
    public static func resolveHash(_ bytes: Data, client: SMPClient) async throws -> Data {
        if bytes.count >= 32 { return bytes }
        guard bytes.count >= 2 else {
            throw Refusal(
                .badInput,
                "hash '\(hex(bytes))' is too short: give the full hash or at least 4 hex digits of it"
            )
        }
        let states = try await client.send(ImageManagement.StateRead()).images
        let matches = Set(states.compactMap(\.hash).filter { $0.starts(with: bytes) })
        guard let match = matches.first else {
            throw Refusal(
                .notOnDevice,
                "no image on the device has a hash starting with \(hex(bytes)); see 'mcumgr image list'"
            )
        }
        guard matches.count == 1 else {
            throw Refusal(
                .notOnDevice,
                "\(matches.count) images have a hash starting with \(hex(bytes)); give more digits"
            )
        }
        return match
    }

    /// `NO_FREE_SLOT` said with what holds the slot and the ways out, read from the image list;
    /// any other refusal is left as it is (`nil`).
    /// - Parameters:
    ///   - refusal: the device's refusal.
    ///   - image: the image number the request addressed.
    ///   - slot: the slot, when the request named one (an erase); else the slot not running.
    ///   - client: the connection, to read the image list.
    ///   - command: how to write a command for the user, e.g. `mcumgr --conn URL os reset`.
    ///   - then: what to do once the slot is free, e.g. "upload again".
    /// - Returns: the explained refusal, or `nil` when there is nothing to add.
    public static func explain(
        _ refusal: SMPDeviceError,
        image: Int,
        slot: Int?,
        client: SMPClient,
        command: (String) -> String,
        then: String
    ) async -> Refusal? {
        guard refusal.matches(ImageManagement.ReturnCode.noFreeSlot),
            let slots = try? await client.send(ImageManagement.StateRead()).images
        else { return nil }
        let entries = slots.filter { Int($0.imageNumber) == image }
        let prefix = "the device refused: \(refusal): "
        if let slot, let running = entries.first(where: { $0.isActive && Int($0.slot) == slot }) {
            return Refusal(
                .deviceRefused,
                prefix + "slot \(slot) holds the running image (\(running.version)); erase the other slot",
                cause: refusal
            )
        }
        let held = entries.filter { slot == nil || Int($0.slot) == slot }
            .compactMap { MCUbootPlanner.pendingChange($0, entries: entries) }
        guard !held.isEmpty else { return nil }
        return Refusal(.deviceRefused, prefix + waysOut(held, command: command, then: then), cause: refusal)
    }

    /// What the next reset would do to each image in the way, that nothing was changed, and the
    /// commands that clear the way: confirm the running test image to keep it, or reset to let it
    /// revert (or to boot an image marked for the next boot, if that is what the user wants).
    /// - Parameters:
    ///   - changes: what holds the slots.
    ///   - command: how to write a command for the user, e.g. `mcumgr --conn URL os reset`.
    ///   - then: what to do after, e.g. "run the upgrade again".
    /// - Returns: one line.
    public static func waysOut(
        _ changes: [FirmwareUpgradePlan.PendingBootChange],
        command: (String) -> String,
        then: String
    ) -> String {
        var ways: [String] = []
        for change in changes where change.kind == .revert {
            if let hash = change.runningHash {
                let confirm = command("image confirm " + hex(Data(hash)))
                ways.append("keep \(change.runningVersion ?? "the running image") with `\(confirm)`")
            }
        }
        if changes.contains(where: { $0.kind == .revert }) {
            ways.append("let it revert with `\(command("os reset"))`")
        }
        if changes.contains(where: { $0.kind != .revert }) {
            ways.append("boot it yourself with `\(command("os reset"))` if you mean to")
        }
        return changes.map(\.description).joined(separator: "; ") + "; nothing was changed: "
            + ways.joined(separator: ", or ") + ", then \(then)"
    }

    /// Lowercase hex, as every hash is shown.
    static func hex(_ bytes: Data) -> String {
        let digits = Array("0123456789abcdef")
        return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0f)]] })
    }
}
