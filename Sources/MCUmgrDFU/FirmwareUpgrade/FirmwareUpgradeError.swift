/// An upgrade that did not reach the promised state, with the state it failed in.
///
/// Equality compares ``code`` and ``state``.
public struct FirmwareUpgradeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong. An open set: new codes are not a breaking change.
    public struct Code: Sendable, Hashable, CaseIterable, CustomStringConvertible {
        private enum Kind: Sendable, Hashable, CaseIterable {
            case invalidPackage, deviceRejected, linkFailed, reconnectFailed, imageMissingAfterReset
            case imageNotActive, imageNotConfirmed, imageNotMarked, resetFailed, slotBusy, resourceNotFound
            case suitNotInstalled, cancelled, unsupported, downgradeRefused, notSwapped, bootloaderNotEntered
            case imageTooLarge
        }
        private let kind: Kind

        /// The package holds nothing this engine can upload (no images, or an image without a hash).
        public static let invalidPackage = Code(kind: .invalidPackage)
        /// The device refused a command (``FirmwareUpgradeError/cause`` is the `SMPDeviceError`).
        public static let deviceRejected = Code(kind: .deviceRejected)
        /// The link failed and the retries ran out.
        public static let linkFailed = Code(kind: .linkFailed)
        /// The device did not answer again after a reset before the deadline.
        public static let reconnectFailed = Code(kind: .reconnectFailed)
        /// After the reset the device no longer holds the image: the bootloader erased it (bad
        /// signature or hash, a refused downgrade).
        public static let imageMissingAfterReset = Code(kind: .imageMissingAfterReset)
        /// After the reset the image is on the device but does not run: reverted, or the
        /// bootloader chose another image (DirectXIP picks the highest version).
        public static let imageNotActive = Code(kind: .imageNotActive)
        /// The image runs but is not confirmed after confirming it.
        public static let imageNotConfirmed = Code(kind: .imageNotConfirmed)
        /// The device accepted test or confirm but does not show the image pending (e.g. a
        /// downgrade the bootloader will not boot).
        public static let imageNotMarked = Code(kind: .imageNotMarked)
        /// The device did not reset: it answered the reset (or its answer was lost) and kept
        /// running without going away.
        public static let resetFailed = Code(kind: .resetFailed)
        /// The device reset and came back with the new image still pending: the bootloader did
        /// not swap (no MCUboot under the application, an unsigned or wrongly signed image, a
        /// refused downgrade).
        public static let notSwapped = Code(kind: .notSwapped)
        /// An image is older than the running one and the device reported that its bootloader
        /// refuses downgrades; nothing was uploaded.
        public static let downgradeRefused = Code(kind: .downgradeRefused)
        /// The slot to upload into is held by an image the bootloader acts on at the next reset
        /// (the revert target of a running test image, an image marked for the next boot), and the
        /// upgrade may not reset the device to free it; or it stays held after resetting.
        /// ``FirmwareUpgradeError/pendingBootChanges`` says what holds it.
        public static let slotBusy = Code(kind: .slotBusy)
        /// SUIT: the device asked for a resource the package does not hold.
        public static let resourceNotFound = Code(kind: .resourceNotFound)
        /// SUIT: the device did not install the envelope before the deadline.
        public static let suitNotInstalled = Code(kind: .suitNotInstalled)
        /// A single-slot device did not stop in its bootloader when reset with `boot_mode` 1 (it
        /// came back running its application), or `recovery` was asked for and the application
        /// answers.
        public static let bootloaderNotEntered = Code(kind: .bootloaderNotEntered)
        /// An image is larger than the slot it goes to (the device's `max_image_size`, or its slot
        /// size); nothing was uploaded.
        public static let imageTooLarge = Code(kind: .imageTooLarge)
        /// The caller cancelled the upgrade.
        public static let cancelled = Code(kind: .cancelled)
        /// The device's bootloader or the package needs something this engine does not do.
        public static let unsupported = Code(kind: .unsupported)

        /// Every code this version knows, for readers of stored codes (``name``).
        public static var allCases: [Code] { Kind.allCases.map(Code.init(kind:)) }

        /// The code in snake_case (`link_failed`, `not_swapped`), as JSON and stored state spell it.
        public var name: String {
            String(description.lowercased().map { $0 == " " ? "_" : $0 })
        }

        public var description: String {
            switch kind {
            case .invalidPackage: "invalid package"
            case .deviceRejected: "device rejected"
            case .linkFailed: "link failed"
            case .reconnectFailed: "reconnect failed"
            case .imageMissingAfterReset: "image missing after reset"
            case .imageNotActive: "image not active"
            case .imageNotConfirmed: "image not confirmed"
            case .imageNotMarked: "image not marked"
            case .resetFailed: "reset failed"
            case .slotBusy: "slot busy"
            case .resourceNotFound: "resource not found"
            case .suitNotInstalled: "SUIT envelope not installed"
            case .cancelled: "cancelled"
            case .unsupported: "unsupported"
            case .downgradeRefused: "downgrade refused"
            case .notSwapped: "not swapped"
            case .bootloaderNotEntered: "bootloader not entered"
            case .imageTooLarge: "image too large"
            }
        }

        /// What kind of failure this is, for callers that sort failures (the CLI's exit status).
        public var category: Category {
            switch kind {
            case .deviceRejected, .slotBusy, .unsupported, .downgradeRefused, .bootloaderNotEntered: .deviceRefused
            case .linkFailed, .reconnectFailed: .link
            case .invalidPackage, .resourceNotFound, .imageTooLarge: .input
            case .cancelled: .cancelled
            case .imageMissingAfterReset, .imageNotActive, .imageNotConfirmed, .imageNotMarked, .resetFailed,
                .notSwapped, .suitNotInstalled:
                .outcome
            }
        }
    }

    /// The kinds of upgrade failure.
    public enum Category: Sendable, Hashable {
        /// The device refused a command, or cannot do what the upgrade needs.
        case deviceRefused
        /// The device could not be reached, or stopped answering.
        case link
        /// The device answered, but after the upgrade it is not in the state the mode promised.
        case outcome
        /// The package is unusable (no image, no hash, a resource the device asks for is missing).
        case input
        /// The caller cancelled.
        case cancelled

        /// The category as the `kind` of the CLI's `--json` error object spells it
        /// (`device_refused`, `link`, `upgrade_outcome`, `bad_input`, `interrupted`).
        public var kind: String {
            switch self {
            case .deviceRefused: "device_refused"
            case .link: "link"
            case .outcome: "upgrade_outcome"
            case .input: "bad_input"
            case .cancelled: "interrupted"
            }
        }
    }

    /// What went wrong.
    public var code: Code
    /// The state the upgrade was in.
    public var state: FirmwareUpgrade.State
    /// What failed and what to try.
    public var message: String
    /// The underlying error (`SMPDeviceError`, `SMPTransportError`…), if any.
    public var cause: (any Error & Sendable)?
    /// For ``Code/slotBusy``: what the reset the upgrade would need does that nobody asked for
    /// (a revert, an image marked for the next boot), so a caller can name the ways out.
    public var pendingBootChanges: [FirmwareUpgradePlan.PendingBootChange] = []

    /// Creates an error.
    /// - Parameters:
    ///   - code: what went wrong.
    ///   - state: the state the upgrade was in.
    ///   - message: a specific explanation.
    ///   - cause: the underlying error.
    public init(_ code: Code, state: FirmwareUpgrade.State, _ message: String, cause: (any Error & Sendable)? = nil) {
        self.code = code
        self.state = state
        self.message = message
        self.cause = cause
    }

    public var description: String {
        var text = "upgrade failed while \(state): \(message)"
        if let cause { text += " (\(cause))" }
        return text
    }

    public static func == (lhs: FirmwareUpgradeError, rhs: FirmwareUpgradeError) -> Bool {
        lhs.code == rhs.code && lhs.state == rhs.state
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(state)
    }
}
