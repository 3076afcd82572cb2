/// Brings a controller up, as a pure state machine in the SwiftNIO style: each state carries
/// what has been learnt so far, each input returns the ``Action`` for the I/O layer to perform;
/// no clock, no I/O.
///
/// The sequence: Reset → Read Local Version Information → Read Local Supported Commands → Read
/// BD_ADDR → Set Event Mask → LE Set Event Mask → LE Read Buffer Size (v2 when the supported
/// commands say so, else v1; v1 again if v2 is refused as unknown) → Read Buffer Size when LE
/// reports no buffers of its own → LE Set Random Address when one was asked for → finished with
/// a ``ControllerInfo``.
///
/// Commands go out only with a command credit (``HCICommandCredits``). Events that answer no
/// command awaited — a stale answer to a previous host's command, an advertising report — are
/// ignored. Every command of the sequence must be answered: the I/O layer bounds each wait and
/// calls ``timedOut()``, which fails the bring-up.
public struct ControllerBringUp: Sendable {
    /// What the I/O layer does next.
    public enum Action: Sendable, Hashable {
        /// Send this command, then deliver events; bound the wait for its answer and call
        /// ``ControllerBringUp/timedOut()`` when it runs out.
        case send(HCICommandPacket)
        /// Nothing to send: deliver the next event (a command is waiting for a credit, or the
        /// event changed nothing).
        case wait
        /// The controller is up.
        case finished(ControllerInfo)
        /// The bring-up failed; the controller is not usable as it is.
        case failed(HCIError)
    }

    /// What has been learnt before the event masks are set.
    struct Identity: Sendable {
        var version: HCI.ReadLocalVersionInformation.ReturnParameters
        var supportedCommands: HCISupportedCommands
        var publicAddress: BluetoothAddress
    }

    /// The LE ACL buffers, once known.
    struct Buffers: Sendable {
        var length: Int
        var count: Int
        var shared: Bool
    }

    enum State: Sendable {
        case idle
        case resetting
        case readingVersion
        case readingSupportedCommands(HCI.ReadLocalVersionInformation.ReturnParameters)
        case readingAddress(HCI.ReadLocalVersionInformation.ReturnParameters, HCISupportedCommands)
        case settingEventMask(Identity)
        case settingLEEventMask(Identity)
        case readingLEBufferSize(Identity, v2: Bool)
        case readingBufferSize(Identity)
        case settingRandomAddress(Identity, Buffers)
        case finished(ControllerInfo)
        case failed(HCIError)
    }

    private(set) var state: State = .idle
    private var credits = HCICommandCredits()
    /// The command of the current state, while it waits for a credit; `nil` once sent.
    private var unsent: HCICommandPacket?
    /// The random address to set, if any.
    let randomAddress: BluetoothAddress?

    /// Creates the bring-up of one controller.
    /// - Parameter randomAddress: a random address to set with LE Set Random Address (for
    ///   scanning and connecting with the random own address type), or `nil`.
    public init(randomAddress: BluetoothAddress? = nil) {
        self.randomAddress = randomAddress
    }

    /// The bring-up starts: the first command is Reset.
    /// - Returns: the action.
    public mutating func start() -> Action {
        guard case .idle = state else { return .wait }
        return proceed(to: .resetting, sending: HCICommandPacket(HCI.Reset()))
    }

    /// An event arrived from the controller.
    /// - Parameter event: the event.
    /// - Returns: the action.
    public mutating func receive(_ event: HCIEvent) -> Action {
        switch state {
        case .idle, .finished, .failed: return .wait
        default: break
        }
        switch event {
        case .commandComplete(let complete):
            credits.update(numHCICommandPackets: complete.numHCICommandPackets)
            guard unsent == nil, let awaited, complete.opcode == awaited else { return sendIfCredited() }
            return answered(complete)
        case .commandStatus(let status):
            credits.update(numHCICommandPackets: status.numHCICommandPackets)
            guard unsent == nil, let awaited, status.opcode == awaited else { return sendIfCredited() }
            // Every bring-up command is answered by a Command Complete; a Command Status for one
            // is a refusal (a controller may refuse an unknown command this way).
            return refused(awaited, status: status.status.isSuccess ? .unspecifiedError : status.status)
        default:
            return .wait
        }
    }

    /// The wait for the current command's answer ran out.
    /// - Returns: the failure.
    public mutating func timedOut() -> Action {
        guard let awaited else { return .wait }
        return fail(HCIError(.timeout, "the controller did not answer \(awaited) in time"))
    }

    /// The opcode whose answer the current state waits for.
    private var awaited: HCIOpcode? {
        switch state {
        case .idle, .finished, .failed: nil
        case .resetting: .reset
        case .readingVersion: .readLocalVersionInformation
        case .readingSupportedCommands: .readLocalSupportedCommands
        case .readingAddress: .readBDADDR
        case .settingEventMask: .setEventMask
        case .settingLEEventMask: .leSetEventMask
        case .readingLEBufferSize(_, let v2): v2 ? .leReadBufferSizeV2 : .leReadBufferSize
        case .readingBufferSize: .readBufferSize
        case .settingRandomAddress: .leSetRandomAddress
        }
    }

    private mutating func answered(_ complete: HCI.CommandComplete) -> Action {
        do throws(HCIError) {
            switch state {
            case .resetting:
                _ = try complete.returnParameters(of: HCI.Reset.self)
                return proceed(to: .readingVersion, sending: HCICommandPacket(HCI.ReadLocalVersionInformation()))
            case .readingVersion:
                let version = try complete.returnParameters(of: HCI.ReadLocalVersionInformation.self)
                return proceed(
                    to: .readingSupportedCommands(version),
                    sending: HCICommandPacket(HCI.ReadLocalSupportedCommands())
                )
            case .readingSupportedCommands(let version):
                let commands = try complete.returnParameters(of: HCI.ReadLocalSupportedCommands.self)
                return proceed(
                    to: .readingAddress(version, commands.supportedCommands),
                    sending: HCICommandPacket(HCI.ReadBDADDR())
                )
            case .readingAddress(let version, let commands):
                let address = try complete.returnParameters(of: HCI.ReadBDADDR.self).address
                let identity = Identity(version: version, supportedCommands: commands, publicAddress: address)
                return proceed(to: .settingEventMask(identity), sending: HCICommandPacket(HCI.SetEventMask.leCentral))
            case .settingEventMask(let identity):
                _ = try complete.returnParameters(of: HCI.SetEventMask.self)
                return proceed(
                    to: .settingLEEventMask(identity),
                    sending: HCICommandPacket(HCI.LESetEventMask.leCentral)
                )
            case .settingLEEventMask(let identity):
                _ = try complete.returnParameters(of: HCI.LESetEventMask.self)
                return readLEBufferSize(identity, v2: identity.supportedCommands.leReadBufferSizeV2)
            case .readingLEBufferSize(let identity, let v2):
                let (length, count): (UInt16, UInt8)
                if v2 {
                    let buffers: HCI.LEReadBufferSizeV2.ReturnParameters
                    do throws(HCIError) {
                        buffers = try complete.returnParameters(of: HCI.LEReadBufferSizeV2.self)
                    } catch  where error.status == .unknownCommand {
                        // The bitmap claimed v2, the controller does not know it: v1 it is.
                        return readLEBufferSize(identity, v2: false)
                    }
                    (length, count) = (buffers.leACLDataPacketLength, buffers.totalNumLEACLDataPackets)
                } else {
                    let buffers = try complete.returnParameters(of: HCI.LEReadBufferSize.self)
                    (length, count) = (buffers.leACLDataPacketLength, buffers.totalNumLEACLDataPackets)
                }
                // Zero means LE shares the controller's other ACL buffers (Read Buffer Size).
                guard length > 0, count > 0 else {
                    return proceed(to: .readingBufferSize(identity), sending: HCICommandPacket(HCI.ReadBufferSize()))
                }
                return buffersKnown(identity, Buffers(length: Int(length), count: Int(count), shared: false))
            case .readingBufferSize(let identity):
                let buffers = try complete.returnParameters(of: HCI.ReadBufferSize.self)
                guard buffers.aclDataPacketLength > 0, buffers.totalNumACLDataPackets > 0 else {
                    throw HCIError(
                        .protocolViolation,
                        "the controller announces no ACL buffers: LE Read Buffer Size and Read Buffer Size "
                            + "both report \(buffers.aclDataPacketLength) bytes × \(buffers.totalNumACLDataPackets)"
                    )
                }
                let shared = Buffers(
                    length: Int(buffers.aclDataPacketLength),
                    count: Int(buffers.totalNumACLDataPackets),
                    shared: true
                )
                return buffersKnown(identity, shared)
            case .settingRandomAddress(let identity, let buffers):
                _ = try complete.returnParameters(of: HCI.LESetRandomAddress.self)
                return finish(identity, buffers, randomAddress: randomAddress)
            case .idle, .finished, .failed:
                return .wait
            }
        } catch {
            return fail(error)
        }
    }

    private mutating func readLEBufferSize(_ identity: Identity, v2: Bool) -> Action {
        let command = v2 ? HCICommandPacket(HCI.LEReadBufferSizeV2()) : HCICommandPacket(HCI.LEReadBufferSize())
        return proceed(to: .readingLEBufferSize(identity, v2: v2), sending: command)
    }

    private mutating func buffersKnown(_ identity: Identity, _ buffers: Buffers) -> Action {
        guard let randomAddress else { return finish(identity, buffers, randomAddress: nil) }
        return proceed(
            to: .settingRandomAddress(identity, buffers),
            sending: HCICommandPacket(HCI.LESetRandomAddress(address: randomAddress))
        )
    }

    private mutating func finish(_ identity: Identity, _ buffers: Buffers, randomAddress: BluetoothAddress?) -> Action {
        let info = ControllerInfo(
            version: identity.version,
            publicAddress: identity.publicAddress,
            randomAddress: randomAddress,
            supportedCommands: identity.supportedCommands,
            aclDataPacketLength: buffers.length,
            aclDataPacketCount: buffers.count,
            aclBuffersAreShared: buffers.shared
        )
        state = .finished(info)
        return .finished(info)
    }

    private mutating func refused(_ opcode: HCIOpcode, status: HCIStatus) -> Action {
        if case .readingLEBufferSize(let identity, true) = state, status == .unknownCommand {
            return readLEBufferSize(identity, v2: false)
        }
        return fail(HCIError(.commandFailed, "the controller refused \(opcode): \(status)", status: status))
    }

    private mutating func fail(_ error: HCIError) -> Action {
        state = .failed(error)
        unsent = nil
        return .failed(error)
    }

    /// Enters a state and sends its command, or keeps it until a credit comes.
    private mutating func proceed(to next: State, sending command: HCICommandPacket) -> Action {
        state = next
        unsent = command
        return sendIfCredited()
    }

    private mutating func sendIfCredited() -> Action {
        guard let command = unsent, credits.take() else { return .wait }
        unsent = nil
        return .send(command)
    }
}
