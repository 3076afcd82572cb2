/// Scans for advertisers, as a pure state machine in the SwiftNIO style: each input returns the
/// ``Action`` for the I/O layer; no clock, no I/O.
///
/// The sequence: scan parameters → scan enable (the extended commands when
/// ``ControllerInfo/supportsExtendedScanning``, else the legacy ones), active scanning, so
/// scannable advertisers' scan responses arrive too → ``Action/discovered(_:)`` for every
/// advertiser first seen or changed → ``stop()`` → scan disable → ``Action/stopped``.
///
/// One command is in flight at a time, and only its answer (matched by opcode) moves the
/// machine; answers to other commands and events that are not the machine's are ignored, so the
/// I/O layer may give it every event. Command credits are the I/O layer's: they are shared with
/// whatever else drives the controller.
public struct LEScanner: Sendable {
    /// What the I/O layer does next.
    public enum Action: Sendable, Hashable {
        /// Send this command, then deliver events; bound the wait for its answer and call
        /// ``LEScanner/timedOut()`` when it runs out.
        case send(HCICommandPacket)
        /// Nothing to do: deliver the next event.
        case wait
        /// The controller scans: advertising reports follow.
        case scanning
        /// Advertisers first seen, or seen again with something new (a name learnt from a scan
        /// response, a new service UUID); in the order their reports arrived.
        case discovered([DiscoveredPeripheral])
        /// Scanning is off.
        case stopped
        /// Scanning failed: a command was refused or not answered.
        case failed(HCIError)
    }

    enum State: Sendable {
        case idle
        case settingParameters
        case enabling
        case scanning
        case disabling
        case stopped
        case failed(HCIError)
    }

    private(set) var state: State = .idle
    /// Whether ``stop()`` was called while a command of the start was in flight.
    private var stopRequested = false
    /// The advertisers seen, by address and address type.
    private var peripherals: [PeerKey: DiscoveredPeripheral] = [:]
    let extended: Bool
    let ownAddressType: LEAddressType
    let interval: UInt16
    let window: UInt16
    let filterDuplicates: Bool

    /// Creates a scanner.
    /// - Parameters:
    ///   - controller: what the bring-up learnt; decides extended or legacy commands, and the own
    ///     address type of scan requests (random when a random address was set, else public).
    ///   - interval: LE_Scan_Interval, in units of 0.625 ms (default 60 ms).
    ///   - window: LE_Scan_Window, in units of 0.625 ms; at most the interval (default 30 ms).
    ///   - filterDuplicates: whether the controller reports each advertiser once (off by
    ///     default: a controller's filter may hide a scan response or a changed advertisement).
    public init(
        controller: ControllerInfo,
        interval: UInt16 = 0x0060,
        window: UInt16 = 0x0030,
        filterDuplicates: Bool = false
    ) {
        self.extended = controller.supportsExtendedScanning
        self.ownAddressType = controller.randomAddress == nil ? .publicDevice : .randomDevice
        self.interval = interval
        self.window = min(window, interval)
        self.filterDuplicates = filterDuplicates
    }

    /// Scanning starts: the scan parameters go first. A scanner scans once: after ``stop()``,
    /// make a new one.
    /// - Returns: the action.
    public mutating func start() -> Action {
        guard case .idle = state else { return .wait }
        state = .settingParameters
        return .send(parametersCommand)
    }

    /// Scanning stops: the scan is disabled (after the command in flight, if any, is answered).
    /// - Returns: the action.
    public mutating func stop() -> Action {
        switch state {
        case .idle:
            state = .stopped
            return .stopped
        case .settingParameters, .enabling:
            stopRequested = true
            return .wait
        case .scanning:
            state = .disabling
            return .send(enableCommand(false))
        case .disabling, .stopped, .failed:
            return .wait
        }
    }

    /// An event arrived from the controller.
    /// - Parameter event: any event.
    /// - Returns: the action.
    public mutating func receive(_ event: HCIEvent) -> Action {
        switch state {
        case .idle, .stopped, .failed: return .wait
        case .scanning: return report(event)
        case .settingParameters: return answered(event, to: parametersOpcode) { $0.parametersSet() }
        case .enabling: return answered(event, to: enableOpcode) { $0.enabled() }
        case .disabling:
            return answered(event, to: enableOpcode) {
                $0.state = .stopped
                return .stopped
            }
        }
    }

    /// The wait for the command in flight ran out.
    /// - Returns: the failure, or ``Action/wait`` when no command is in flight.
    public mutating func timedOut() -> Action {
        switch state {
        case .settingParameters: fail(.unanswered(parametersOpcode.gapCommandName))
        case .enabling, .disabling: fail(.unanswered(enableOpcode.gapCommandName))
        case .idle, .scanning, .stopped, .failed: .wait
        }
    }

    /// The advertisers seen so far, in no particular order.
    public var discovered: [DiscoveredPeripheral] { Array(peripherals.values) }

    private mutating func answered(
        _ event: HCIEvent,
        to opcode: HCIOpcode,
        then next: (inout LEScanner) -> Action
    ) -> Action {
        switch CommandAnswer(event, to: opcode) {
        case .notAnswer: return .wait
        case .completed: return next(&self)
        case .refused(let status): return fail(.refused(opcode.gapCommandName, status))
        // Scanning commands are answered by Command Complete; success in a Command Status is
        // not an answer at all.
        case .pending: return fail(HCIError(.protocolViolation, "a Command Status for \(opcode.gapCommandName)"))
        }
    }

    private mutating func parametersSet() -> Action {
        guard !stopRequested else {
            state = .stopped
            return .stopped
        }
        state = .enabling
        return .send(enableCommand(true))
    }

    private mutating func enabled() -> Action {
        guard !stopRequested else {
            state = .disabling
            return .send(enableCommand(false))
        }
        state = .scanning
        return .scanning
    }

    private mutating func report(_ event: HCIEvent) -> Action {
        let sightings: [AdvertisingSighting]
        switch event {
        case .leAdvertisingReport(let event): sightings = event.reports.map(AdvertisingSighting.init)
        case .leExtendedAdvertisingReport(let event): sightings = event.reports.map(AdvertisingSighting.init)
        default: return .wait
        }
        var changed: [DiscoveredPeripheral] = []
        for sighting in sightings {
            let key = PeerKey(address: sighting.address, type: sighting.addressType)
            let known = peripherals[key]
            var peripheral = known ?? DiscoveredPeripheral(address: sighting.address, addressType: sighting.addressType)
            if peripheral.merge(sighting) || known == nil {
                // One entry per advertiser, even when one event reports it twice.
                changed.removeAll { $0.address == peripheral.address && $0.addressType == peripheral.addressType }
                changed.append(peripheral)
            }
            peripherals[key] = peripheral
        }
        return changed.isEmpty ? .wait : .discovered(changed)
    }

    private mutating func fail(_ error: HCIError) -> Action {
        state = .failed(error)
        return .failed(error)
    }
}

extension LEScanner {
    private var parametersOpcode: HCIOpcode { extended ? .leSetExtendedScanParameters : .leSetScanParameters }
    private var enableOpcode: HCIOpcode { extended ? .leSetExtendedScanEnable : .leSetScanEnable }

    private var parametersCommand: HCICommandPacket {
        guard extended else {
            return HCICommandPacket(
                HCI.LESetScanParameters(
                    scanType: .active,
                    interval: interval,
                    window: window,
                    ownAddressType: ownAddressType
                )
            )
        }
        let scan = HCI.LESetExtendedScanParameters.PHYScan(
            phy: .le1M,
            scanType: .active,
            interval: interval,
            window: window
        )
        return HCICommandPacket(HCI.LESetExtendedScanParameters(ownAddressType: ownAddressType, scans: [scan]))
    }

    private func enableCommand(_ enable: Bool) -> HCICommandPacket {
        guard extended else {
            return HCICommandPacket(HCI.LESetScanEnable(enable: enable, filterDuplicates: enable && filterDuplicates))
        }
        return HCICommandPacket(
            HCI.LESetExtendedScanEnable(enable: enable, filterDuplicates: enable && filterDuplicates ? 1 : 0)
        )
    }
}

/// An advertiser's identity while scanning: its address with its type (a public and a random
/// address may have the same bytes).
struct PeerKey: Sendable, Hashable {
    var address: BluetoothAddress
    var type: LEAddressType
}
