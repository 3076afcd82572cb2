/// Advertises this device in the peripheral role, as a pure state machine in the SwiftNIO
/// style: each input returns the ``Action`` for the I/O layer; no clock, no I/O.
///
/// The sequence: LE Set Advertising Parameters (connectable undirected ADV_IND on all three
/// channels) → LE Set Advertising Data (Flags and the service UUID) → LE Set Scan Response Data
/// (the complete local name, or the shortened one if it does not fit) → LE Set Advertising
/// Enable → ``Action/advertising``. A central's connection (LE Connection Complete or LE Enhanced
/// Connection Complete in the peripheral role) → ``Action/connected(_:)``; legacy advertising
/// stops by itself then. After that connection ends, ``restart()`` enables advertising again;
/// ``stop()`` disables it.
///
/// One command is in flight at a time, and only its answer (matched by opcode) moves the
/// machine; other events are ignored.
public struct LEAdvertiser: Sendable {
    /// What the I/O layer does next.
    public enum Action: Sendable, Hashable {
        /// Send this command, then deliver events; bound the wait for its answer and call
        /// ``LEAdvertiser/timedOut()`` when it runs out.
        case send(HCICommandPacket)
        /// Nothing to do: deliver the next event.
        case wait
        /// The controller advertises.
        case advertising
        /// A central connected; advertising has stopped.
        case connected(LEConnection)
        /// Advertising is off after ``LEAdvertiser/stop()``.
        case stopped
        /// A command was refused or not answered.
        case failed(HCIError)
    }

    enum State: Sendable {
        case idle
        case settingParameters
        case settingData
        case settingScanResponse
        case enabling
        case advertising
        case connected(LEConnection)
        case disabling
        case stopped
        case failed(HCIError)
    }

    private(set) var state: State = .idle
    /// Whether ``stop()`` was called while a command of the start was in flight.
    private var stopRequested = false
    let parameters: HCI.LESetAdvertisingParameters
    let advertisingData: HCI.LESetAdvertisingData
    let scanResponseData: HCI.LESetScanResponseData

    /// Creates the advertising of a device.
    /// - Parameters:
    ///   - name: the device name, for the scan response; shortened when longer than 29 bytes.
    ///   - service: the service UUID to advertise (the SMP service,
    ///     8D53DC1D-1DB7-4CD3-868B-8A527460AA84, for an SMP server).
    ///   - controller: what the bring-up learnt; the own address type is random when a random
    ///     address was set, else public.
    ///   - interval: the advertising interval, in units of 0.625 ms (default 100 ms; 0x0020 to
    ///     0x4000).
    /// - Throws: ``HCIError`` `.malformedAdvertisingData` if the name is empty (or its first
    ///   character alone is longer than the 29 bytes a name may take): there would be no name to
    ///   find the device by.
    public init(name: String, service: BluetoothUUID, controller: ControllerInfo, interval: UInt16 = 160)
        throws(HCIError)
    {
        guard !name.isEmpty else {
            throw HCIError(.malformedAdvertisingData, "an empty device name cannot be advertised")
        }
        let interval = min(max(interval, 0x0020), 0x4000)
        parameters = HCI.LESetAdvertisingParameters(
            intervalMin: interval,
            intervalMax: interval,
            type: .connectableUndirected,
            ownAddressType: controller.randomAddress == nil ? .publicDevice : .randomDevice
        )
        advertisingData = try HCI.LESetAdvertisingData(data: Self.advertisingData(service: service, name: name))
        let response = Self.scanResponseData(name: name)
        // A name whose first character alone takes more than 29 bytes leaves an empty name.
        guard response.count > 2 else {
            throw HCIError(
                .malformedAdvertisingData,
                "the device name \"\(name)\" has no character that fits in 29 bytes"
            )
        }
        scanResponseData = try HCI.LESetScanResponseData(data: response)
    }

    /// Advertising starts: the parameters go first.
    /// - Returns: the action.
    public mutating func start() -> Action {
        guard case .idle = state else { return .wait }
        state = .settingParameters
        return .send(HCICommandPacket(parameters))
    }

    /// Advertising starts again after the connection it led to has ended (or after ``stop()``).
    /// - Returns: the action: Enable, or ``Action/wait`` in any other state.
    public mutating func restart() -> Action {
        switch state {
        case .connected, .stopped:
            stopRequested = false
            state = .enabling
            return .send(enableCommand(true))
        default:
            return .wait
        }
    }

    /// Advertising stops: disabled (after the command in flight, if any, is answered).
    /// - Returns: the action.
    public mutating func stop() -> Action {
        switch state {
        case .idle, .connected:
            state = .stopped
            return .stopped
        case .settingParameters, .settingData, .settingScanResponse, .enabling:
            stopRequested = true
            return .wait
        case .advertising:
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
        if let completion = ConnectionCompletion(event) { return completed(completion) }
        guard let awaited else { return .wait }
        switch CommandAnswer(event, to: awaited) {
        case .notAnswer: return .wait
        case .completed: return next()
        case .refused(let status): return fail(.refused(awaited.gapCommandName, status))
        case .pending: return fail(HCIError(.protocolViolation, "a Command Status for \(awaited.gapCommandName)"))
        }
    }

    /// The wait for the command in flight ran out.
    /// - Returns: the failure, or ``Action/wait`` when no command is in flight.
    public mutating func timedOut() -> Action {
        guard let awaited else { return .wait }
        return fail(.unanswered(awaited.gapCommandName))
    }

    /// The opcode whose answer the current state waits for.
    private var awaited: HCIOpcode? {
        switch state {
        case .settingParameters: .leSetAdvertisingParameters
        case .settingData: .leSetAdvertisingData
        case .settingScanResponse: .leSetScanResponseData
        case .enabling, .disabling: .leSetAdvertisingEnable
        case .idle, .advertising, .connected, .stopped, .failed: nil
        }
    }

    /// The command in flight succeeded.
    private mutating func next() -> Action {
        switch state {
        case .settingParameters where stopRequested, .settingData where stopRequested,
            .settingScanResponse where stopRequested:
            return stopped()
        case .settingParameters:
            state = .settingData
            return .send(HCICommandPacket(advertisingData))
        case .settingData:
            state = .settingScanResponse
            return .send(HCICommandPacket(scanResponseData))
        case .settingScanResponse:
            state = .enabling
            return .send(enableCommand(true))
        case .enabling where stopRequested:
            state = .disabling
            return .send(enableCommand(false))
        case .enabling:
            state = .advertising
            return .advertising
        case .disabling:
            return stopped()
        case .idle, .advertising, .connected, .stopped, .failed:
            return .wait
        }
    }

    private mutating func completed(_ completion: ConnectionCompletion) -> Action {
        // Only while the advertisement is (or may be) on the air; a failed completion in the
        // peripheral role ends directed advertising only, which this machine does not use.
        guard completion.connection.role == .peripheral, completion.status.isSuccess else { return .wait }
        switch state {
        case .enabling, .advertising, .disabling:
            state = .connected(completion.connection)
            return .connected(completion.connection)
        default:
            return .wait
        }
    }

    private mutating func stopped() -> Action {
        state = .stopped
        return .stopped
    }

    private mutating func fail(_ error: HCIError) -> Action {
        state = .failed(error)
        return .failed(error)
    }

    private func enableCommand(_ enable: Bool) -> HCICommandPacket {
        HCICommandPacket(HCI.LESetAdvertisingEnable(enable: enable))
    }
}
