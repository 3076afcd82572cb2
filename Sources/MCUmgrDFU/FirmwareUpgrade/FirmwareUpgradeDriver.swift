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
    private var events: UpgradeEventEmitter
    /// Set until the first slots read are handed over.
    private var onSlotsRead: FirmwareUpgrade.SlotsObserver?
    var uploadedBytes = 0

    init(
        upgrade: FirmwareUpgrade,
        payload: UpgradePayload,
        control: RunControl,
        continuation: AsyncThrowingStream<FirmwareUpgrade.Event, any Error>.Continuation,
        onSlotsRead: FirmwareUpgrade.SlotsObserver? = nil
    ) {
        self.upgrade = upgrade
        self.payload = payload
        self.control = control
        self.continuation = continuation
        self.onSlotsRead = onSlotsRead
        machine = FirmwareUpgradeStateMachine(configuration: upgrade.configuration, payload: payload)
        events = UpgradeEventEmitter(continuation: continuation, logger: upgrade.logger)
    }

    mutating func run() async {
        var action = machine.handle(.start, at: upgrade.clock.elapsed())
        while true {
            events.report(machine)
            await handOverSlots()
            if Task.isCancelled || control.isCancelled, !action.ends {
                action = machine.handle(.cancel, at: upgrade.clock.elapsed())
            } else if control.isPaused && !machine.isPaused && !action.ends {
                action = machine.handle(.pause, at: upgrade.clock.elapsed())
                continuation.yield(.paused(machine.state))
            }
            switch action {
            case .succeed, .fail:
                events.report(machine)
                await client?.close()
                if case .fail(let error) = action {
                    upgrade.logger.debug("upgrade failed", metadata: ["error": "\(error)"])
                    continuation.finish(throwing: error)
                } else {
                    continuation.yield(
                        .completed(events.summary(machine, uploadedBytes: uploadedBytes, at: upgrade.clock.elapsed()))
                    )
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

    /// Hands the slots first read to the caller once, and waits for it, before the next action
    /// is performed: nothing that could change the device is sent until then.
    private mutating func handOverSlots() async {
        guard let observer = onSlotsRead, let slots = machine.initialSlots else { return }
        onSlotsRead = nil
        await observer(slots)
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
            case .readSlotInfo:
                return .slotInfo(try await connected().send(ImageManagement.SlotInfo()).images)
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
            case .reset(let force, let bootMode):
                _ = try await connected().send(OSManagement.Reset(force: force ? true : nil, bootMode: bootMode))
            case .probe:
                do {
                    let timeout = upgrade.configuration.probeTimeout
                    _ = try await connected().send(OSManagement.Echo(text: ""), timeout: timeout, retries: 0)
                } catch is SMPDeviceError {
                    // Refused is answered: the device is up.
                }
                return .probeAnswered
            case .processSUITEnvelope, .pollSUIT, .readSUITManifests:
                return try await performSUIT(action)
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
            return FirmwareUpgradeStateMachine.Input(failure: error, during: action)
        }
    }

    /// The SUIT requests that are not uploads.
    private func performSUIT(_ action: FirmwareUpgradeStateMachine.Action) async throws
        -> FirmwareUpgradeStateMachine.Input
    {
        switch action {
        case .processSUITEnvelope:
            _ = try await connected().send(SUITManagement.EnvelopeUpload.processDeferredEnvelope)
            return .done
        case .pollSUIT:
            let request = try await connected().send(SUITManagement.MissingImageState())
            guard let session = request.streamSessionID, let uri = request.resourceURI else {
                return .suitNothingRequested
            }
            return .suitRequested(resource: uri, session: session)
        case .readSUITManifests:
            return .suitManifests(try await installedDigests())
        default:
            preconditionFailure("performSUIT(\(action))")
        }
    }

    func connected() throws -> SMPClient {
        guard let client else { throw SMPTransportError(.disconnected, "no connection is open") }
        return client
    }
}
