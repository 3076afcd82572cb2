import Foundation
import Logging
import MCUboot
import MCUmgr
import SMPCore
import SMPLink

/// Performs a ``FirmwareUpgradeStateMachine``'s actions over a client and feeds the outcomes
/// back; decides nothing. One per run.
struct FirmwareUpgradeDriver {
    let upgrade: FirmwareUpgrade
    let payload: UpgradePayload
    let control: RunControl
    let continuation: AsyncThrowingStream<FirmwareUpgrade.Event, any Error>.Continuation
    var machine: FirmwareUpgradeStateMachine
    var client: SMPClient?
    private var shown = (states: 0, plan: FirmwareUpgradePlan?.none, warnings: 0)
    var uploadedBytes = 0

    init(
        upgrade: FirmwareUpgrade,
        payload: UpgradePayload,
        control: RunControl,
        continuation: AsyncThrowingStream<FirmwareUpgrade.Event, any Error>.Continuation
    ) {
        self.upgrade = upgrade
        self.payload = payload
        self.control = control
        self.continuation = continuation
        machine = FirmwareUpgradeStateMachine(configuration: upgrade.configuration, payload: payload)
    }

    mutating func run() async {
        var action = machine.handle(.start, at: upgrade.clock.elapsed())
        while true {
            report()
            if Task.isCancelled || control.isCancelled, !action.ends {
                action = machine.handle(.cancel, at: upgrade.clock.elapsed())
            } else if control.isPaused && !machine.isPaused && !action.ends {
                action = machine.handle(.pause, at: upgrade.clock.elapsed())
                continuation.yield(.paused(machine.state))
            }
            switch action {
            case .succeed, .fail:
                report()
                await client?.close()
                if case .fail(let error) = action {
                    upgrade.logger.debug("upgrade failed", metadata: ["error": "\(error)"])
                    continuation.finish(throwing: error)
                } else {
                    continuation.yield(.completed(summary()))
                    continuation.finish()
                }
                return
            default:
                let input = await perform(action)
                switch input {
                case .pause: continuation.yield(.paused(machine.state))  // an upload stopped for it
                case .resume: continuation.yield(.resumed(machine.state))
                default: break
                }
                action = machine.handle(input, at: upgrade.clock.elapsed())
            }
        }
    }

    /// Emits what changed: the state, a new plan, new warnings.
    private mutating func report() {
        for (index, state) in machine.visited.enumerated().dropFirst(shown.states) {
            let from = index == 0 ? FirmwareUpgrade.State.idle : machine.visited[index - 1]
            continuation.yield(.stateChanged(from: from, to: state))
            upgrade.logger.debug("upgrade state", metadata: ["from": "\(from)", "to": "\(state)"])
        }
        shown.states = machine.visited.count
        for warning in machine.warnings.dropFirst(shown.warnings) { continuation.yield(.warning(warning)) }
        shown.warnings = machine.warnings.count
        if let plan = machine.plan, plan != shown.plan {
            shown.plan = plan
            continuation.yield(.planned(plan))
        }
    }

    private func summary() -> FirmwareUpgrade.Summary {
        FirmwareUpgrade.Summary(
            plan: machine.plan,
            before: machine.initialSlots ?? [],
            after: machine.lastSlots,
            bootloaderName: machine.bootloaderName,
            bootloaderMode: machine.bootloaderMode,
            uploadedBytes: uploadedBytes,
            duration: upgrade.clock.elapsed(),
            isUpToDate: machine.plan?.isUpToDate ?? false
        )
    }

    /// Performs one action and says what happened.
    private mutating func perform(_ action: FirmwareUpgradeStateMachine.Action) async
        -> FirmwareUpgradeStateMachine.Input
    {
        do {
            switch action {
            case .connect:
                await client?.close()
                client = nil
                client = try await SMPClient.connect(
                    upgrade.transport,
                    configuration: upgrade.clientConfiguration,
                    logger: upgrade.logger
                )
                return .connected
            case .readParameters:
                _ = try await connected().loadParameters()
                return .parametersRead
            case .readBootloaderInfo(let query):
                let info = try await connected().send(OSManagement.BootloaderInfo(query: query))
                if query == nil { return .bootloaderName(info.bootloader) }
                return .bootloaderMode(info.mode, noDowngrade: info.noDowngrade ?? false)
            case .readImageList:
                return .imageList(try await connected().send(ImageManagement.StateRead()).images)
            case .upload(let image, let index):
                let chosen = payload.images[index]
                let sha = Data(ImageHashAlgorithm.sha256.hash(chosen.data))
                let upload = ImageUpload(data: chosen.data, image: image, sha256: sha, imageHash: chosen.hash)
                try await self.upload(upload, image: image)
            case .uploadSUIT(let part):
                try await uploadSUIT(part)
            case .eraseAppSettings:
                _ = try await connected().send(ZephyrBasicManagement.EraseStorage())
            case .writeImageState(let hash, let confirm):
                let answer = try await connected().send(ImageManagement.StateWrite(hash: Data(hash), confirm: confirm))
                return .stateWritten(answer.images)
            case .reset(let force):
                _ = try await connected().send(OSManagement.Reset(force: force ? true : nil))
            case .probe:
                do {
                    let timeout = upgrade.configuration.probeTimeout
                    _ = try await connected().send(OSManagement.Echo(text: ""), timeout: timeout, retries: 0)
                } catch is SMPDeviceError {
                    // Refused is answered: the device is up.
                }
                return .probeAnswered
            case .processSUITEnvelope:
                _ = try await connected().send(SUITManagement.EnvelopeUpload.processDeferredEnvelope)
            case .pollSUIT:
                let request = try await connected().send(SUITManagement.MissingImageState())
                guard let session = request.streamSessionID, let uri = request.resourceURI else {
                    return .suitNothingRequested
                }
                return .suitRequested(resource: uri, session: session)
            case .readSUITManifests:
                return .suitManifests(try await installedDigests())
            case .wait(let duration):
                if duration > .zero { try await upgrade.clock.sleep(duration) }
                return .waited
            case .waitForResume:
                await control.waitUntilResumed()
                return .resume
            case .succeed, .fail:
                return .cancel
            }
            return .done
        } catch {
            return classify(error, during: action)
        }
    }

    private func classify(_ error: any Error, during action: FirmwareUpgradeStateMachine.Action)
        -> FirmwareUpgradeStateMachine.Input
    {
        switch error {
        case is CancellationError: return .cancel
        case is UploadPaused: return .pause
        case let refusal as SMPDeviceError: return .deviceRefused(refusal)
        case let failure as FirmwareUpgradeError: return .failed(failure.code, failure.message)
        case let transfer as SMPTransferError where transfer.code == .deviceHashMismatch:
            return .uploadCorrupted(transfer)
        case let transfer as SMPTransferError:
            // The device answers but does not take the data: retried after a reconnection, as
            // a link failure is, within the step's retries.
            return .linkFailed(transfer)
        case let link as SMPTransportError:
            // A probe that timed out may be one lost datagram; a dropped link is the device gone.
            if case .probe = action, link.code == .timeout { return .probeUnanswered }
            // A request that must not be repeated, cut off or unanswered: it may have happened.
            if link.code == .outcomeUnknown || (link.code == .disconnected && action.changesDevice) {
                return .outcomeUnknown(link)
            }
            return .linkFailed(link)
        case let malformed as SMPError: return .linkFailed(malformed)
        default: return .linkFailed(SendableDescription(error))
        }
    }

    func connected() throws -> SMPClient {
        guard let client else { throw SMPTransportError(.disconnected, "no connection is open") }
        return client
    }
}

/// Thrown inside the driver when a pause stops an upload.
struct UploadPaused: Error {}

/// An error that is not known to be `Sendable`, kept as its description.
struct SendableDescription: Error, Sendable, CustomStringConvertible {
    let description: String
    init(_ error: any Error) { description = "\(error)" }
}

extension FirmwareUpgradeStateMachine.Action {
    /// The run ends with it.
    var ends: Bool {
        switch self {
        case .succeed, .fail: true
        default: false
        }
    }

    /// Sent once and never repeated: a cut link leaves its outcome unknown.
    var changesDevice: Bool {
        switch self {
        case .reset, .eraseAppSettings, .processSUITEnvelope: true
        default: false
        }
    }
}
