import Logging
import SMPBytes
import SMPHCI
import SMPLink

/// An LE host of our own on one HCI controller: it brings the controller up, runs one procedure
/// at a time (a scan, a connection, advertising) by feeding every event to the pure state machine
/// of SMPHCI that drives it, and carries L2CAP over ACL for every connection (ATT to the
/// connection's owner, LE signalling answered here, flow control from the controller's buffers).
///
/// Opened with `open(_:randomAddress:clock:logger:)`; the controller's socket or UART belongs to
/// it until `close()`. When the controller goes away every connection ends with its reason.
public actor HCIHost {
    /// What the bring-up learnt about the controller.
    public nonisolated let controller: ControllerInfo
    /// Where the controller is, for messages.
    public nonisolated let address: HCIControllerAddress
    let link: H4Link
    let logger: Logger
    let clock: SMPClock
    var credits = HCICommandCredits()
    /// Commands waiting for a credit, in order.
    var unsentCommands: [HCICommandPacket] = []
    /// The procedure running, which receives every event; others wait their turn.
    var procedure: HCIProcedure?
    var procedureWaiters: [CheckedContinuation<Void, Never>] = []
    var connections: [UInt16: HCIConnectionState] = [:]
    /// Why each ended connection ended, until its handle is used again: a write on it fails with
    /// the controller's reason, not only "gone".
    var endedConnections: [UInt16: any Error] = [:]
    var flow: ACLFlowControl
    /// Why the controller is gone, once it is.
    var endReason: (any Error)?
    /// Writers waiting for the controller's ACL buffers.
    var aclWaiters: [CheckedContinuation<Void, Never>] = []

    /// How long the controller may take to answer a command, unless `open(_:randomAddress:commandTimeout:clock:logger:)`
    /// says otherwise. Generous: a UART dongle's Reset takes a while, and a loaded machine must
    /// not make a working controller fail.
    public static let defaultCommandTimeout = Duration.seconds(10)
    /// How long the controller may take to answer a command (bring-up, scanning, advertising).
    public nonisolated let commandTimeout: Duration

    private init(
        address: HCIControllerAddress,
        link: H4Link,
        controller: ControllerInfo,
        commandTimeout: Duration,
        clock: SMPClock,
        logger: Logger
    ) {
        self.address = address
        self.link = link
        self.controller = controller
        self.commandTimeout = commandTimeout
        self.clock = clock
        self.logger = logger
        flow = ACLFlowControl(capacity: controller.aclDataPacketCount)
    }

    /// Opens the controller and brings it up (Reset first: whatever a previous host left, links
    /// and advertising, is gone).
    /// - Parameters:
    ///   - address: where the controller is.
    ///   - randomAddress: a static random address to use, or `nil` for the public one.
    ///   - commandTimeout: how long the controller may take to answer each command; a controller
    ///     silent for longer fails the bring-up (or the procedure) with `HCIError` `.timeout`.
    ///   - clock: the clock of the host's timeouts.
    ///   - logger: the host's logger.
    /// - Returns: the host, ready for procedures.
    /// - Throws: `SystemCallError` when the controller cannot be reached, `HCIError` when it
    ///   does not come up (a refused or unanswered command, bytes that are not HCI).
    public static func open(
        _ address: HCIControllerAddress,
        randomAddress: BluetoothAddress? = nil,
        commandTimeout: Duration = defaultCommandTimeout,
        clock: SMPClock = .continuous,
        logger: Logger = Logger(label: "mcumgr.hci")
    ) async throws -> HCIHost {
        let link = try H4Link(address)
        do {
            let info = try await bringUp(link, randomAddress: randomAddress, commandTimeout: commandTimeout)
            logger.debug(
                "controller up",
                metadata: [
                    "controller": "\(address)", "acl": "\(info.aclDataPacketCount) × \(info.aclDataPacketLength)",
                ]
            )
            let host = HCIHost(
                address: address,
                link: link,
                controller: info,
                commandTimeout: commandTimeout,
                clock: clock,
                logger: logger
            )
            await host.startPump()
            return host
        } catch {
            link.close()
            throw error
        }
    }

    /// Drives `ControllerBringUp` over the link, before the host exists (nothing else runs yet).
    /// Its waits are on the real clock: they bound a real controller's answers.
    private static func bringUp(
        _ link: H4Link,
        randomAddress: BluetoothAddress?,
        commandTimeout: Duration
    ) async throws -> ControllerInfo {
        var iterator = link.inputs.makeAsyncIterator()
        var machine = ControllerBringUp(randomAddress: randomAddress)
        var action = machine.start()
        let clock = ContinuousClock()
        var deadline = clock.now + commandTimeout
        while true {
            switch action {
            case .send(let command):
                try link.send(.command(command))
                deadline = clock.now + commandTimeout
            case .finished(let info): return info
            case .failed(let error): throw error
            case .wait: break
            }
            guard let input = await iterator.next() else {
                throw HCIError(.protocolViolation, "the controller at \(link.description) went away during bring-up")
            }
            switch input {
            case .packet(.event(let packet)): action = try receive(packet, machine: &machine)
            case .packet, .idle: action = .wait
            case .ended(let error): throw error ?? HCIError(.protocolViolation, "the controller went away")
            }
            // After every input, not only in silence: a controller chattering events that answer
            // nothing must not keep the bring-up waiting for ever.
            if case .wait = action, clock.now >= deadline { action = machine.timedOut() }
        }
    }

    /// One event for the bring-up. A malformed Command Complete or Command Status may be the
    /// answer awaited, so it fails the bring-up; any other malformed event (a previous host's
    /// advertising report arriving before Reset is answered) does not matter to it.
    private static func receive(_ packet: HCIEventPacket, machine: inout ControllerBringUp) throws(HCIError)
        -> ControllerBringUp.Action
    {
        do throws(HCIError) {
            return machine.receive(try HCIEvent(packet))
        } catch {
            guard packet.code == .commandComplete || packet.code == .commandStatus else { return .wait }
            throw error
        }
    }

    /// Closes the controller's channel: every connection ends.
    public func close() {
        link.close()
    }

    // Nobody can use the controller any more: its reader thread and socket (or UART) must not
    // outlive the host, in a process that connects again and again (fleets, `mcumgr ui`).
    deinit { link.close() }
}
