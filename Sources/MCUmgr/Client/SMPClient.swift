import Foundation
import Logging
import SMPCBOR
import SMPCore
import SMPLink

/// A client for one device connection: sends typed requests and returns typed responses.
///
/// - Several requests may be in flight at once (the transfer engine pipelines uploads); answers
///   are matched by sequence number, in any order. A late or duplicate answer after a request
///   finished is dropped, never taken as the next request's answer.
/// - Each attempt has a timeout; a timed-out request is sent again (with a new sequence number)
///   up to ``Configuration/retries`` times, and an answer to any attempt completes it.
/// - A device that answers `EBUSY` is asked again after a growing pause.
/// - SMP v2 is used by default; when the device answers in v1, or refuses v2 with
///   `rc 13` (UNSUPPORTED_TOO_NEW), the client falls back to v1 for the rest of the connection.
/// - The device's MCUmgr parameters (`buf_size`, `buf_count`) are read once per connection, when
///   first needed (a transfer, or a request larger than the smallest buffer Zephyr configures),
///   so a command to a silent device waits only for its own request.
public actor SMPClient {
    /// Behaviour of the client.
    public struct Configuration: Sendable {
        /// How long one attempt waits for its answer.
        public var timeout: Duration
        /// Further attempts after a timeout (0 = no retry).
        public var retries: Int
        /// How many times an `EBUSY` or `ENOMEM` answer is retried, with a pause of
        /// `busyBackoff × attempt`.
        public var busyRetries: Int
        /// The pause unit between `EBUSY` retries.
        public var busyBackoff: Duration
        /// The protocol version tried first.
        public var preferredVersion: SMPVersion
        /// Read OS command 6 (MCUmgr parameters) when first needed, to size frames and windows.
        public var readsParameters: Bool
        /// The first sequence number; `nil` picks a random one, as Nordic's clients do.
        public var firstSequence: UInt8?
        /// Makes the loggers of the client's components: `mcumgr.transfer` for the transfer
        /// engine and `mcumgr.group.NAME` for each group's frames and refusals (the client's own
        /// logger is the one passed to it). Swap it to route them to your log handler.
        public var makeLogger: @Sendable (String) -> Logger
        /// The clock timeouts, back-off pauses and transfer rates are measured on (a test clock in
        /// tests, so that a timeout is a step the test takes, not a wait).
        public var clock: SMPClock

        /// Creates a configuration.
        /// - Parameters:
        ///   - timeout: per-attempt timeout.
        ///   - retries: attempts after a timeout.
        ///   - busyRetries: retries of `EBUSY` answers.
        ///   - busyBackoff: pause unit between busy retries.
        ///   - preferredVersion: protocol version tried first.
        ///   - readsParameters: read the device's buffer parameters when first needed.
        ///   - firstSequence: first sequence number, or `nil` for a random one.
        ///   - makeLogger: makes the loggers of the transfer engine and of each group.
        ///   - clock: the clock of timeouts and pauses.
        public init(
            timeout: Duration = .seconds(3),
            retries: Int = 3,
            busyRetries: Int = 10,
            busyBackoff: Duration = .milliseconds(50),
            preferredVersion: SMPVersion = .v2,
            readsParameters: Bool = true,
            firstSequence: UInt8? = nil,
            makeLogger: @escaping @Sendable (String) -> Logger = { Logger(label: $0) },
            clock: SMPClock = .continuous
        ) {
            self.timeout = timeout
            self.retries = retries
            self.busyRetries = busyRetries
            self.busyBackoff = busyBackoff
            self.preferredVersion = preferredVersion
            self.readsParameters = readsParameters
            self.firstSequence = firstSequence
            self.makeLogger = makeLogger
            self.clock = clock
        }
    }

    /// The device's buffer parameters (OS command 6), when it answered.
    public struct DeviceParameters: Sendable, Hashable {
        /// One SMP buffer, header and CBOR included (`buf_size`).
        public var bufferSize: Int
        /// Number of buffers (`buf_count`): how many requests the device can hold at once.
        public var bufferCount: Int
    }

    typealias Expectation = PendingRequests<ResponseWaiter>.Expectation

    /// The connection this client talks over.
    public nonisolated let connection: any SMPConnection
    /// The configuration in force.
    public let configuration: Configuration
    private let logger: Logger
    /// The transfer engine's logger (`mcumgr.transfer`).
    let transferLogger: Logger
    private var groupLoggers: [SMPGroup: Logger] = [:]
    var pending: PendingRequests<ResponseWaiter>
    /// Every request waiting for an answer: its frame and attempts, and when its current attempt
    /// times out.
    var timeouts: [Int: RequestTimeout] = [:]
    private var readerTask: Task<Void, Never>?
    private var closedError: (any Error)?

    /// The protocol version used for requests; falls back to v1 when the device needs it.
    public private(set) var version: SMPVersion
    /// The device's buffer parameters, if it reported them.
    public private(set) var deviceParameters: DeviceParameters?
    /// The one read of the parameters per connection (repeated only after a link failure).
    private var parametersRead: Task<DeviceParameters?, any Error>?

    /// Creates a client over an open connection and starts reading its frames.
    ///
    /// Prefer ``connect(_:configuration:logger:)``, which also reads the device's parameters.
    /// - Parameters:
    ///   - connection: an open connection.
    ///   - configuration: client behaviour.
    ///   - logger: where decisions (`debug`) and every frame (`trace`) are logged.
    public init(connection: any SMPConnection, configuration: Configuration = .init(), logger: Logger? = nil) {
        self.connection = connection
        self.configuration = configuration
        self.logger = logger ?? Logger(label: "mcumgr.client")
        self.transferLogger = configuration.makeLogger("mcumgr.transfer")
        self.version = configuration.preferredVersion
        self.pending = PendingRequests(firstSequence: configuration.firstSequence ?? UInt8.random(in: 0...255))
    }

    deinit {
        // A client dropped without `close()` leaves no task behind: its reader (which holds the
        // client weakly) would otherwise wait on the connection's frames for ever, holding the
        // stream and the connection; watchdogs (which hold it weakly too) would sleep out their
        // timeouts. The parameters read holds the client, so it is not running by the time the
        // client is freed.
        readerTask?.cancel()
        for entry in timeouts.values { entry.watchdog?.cancel() }
    }

    /// Connects through a transport and starts the client. Nothing is sent yet.
    /// - Parameters:
    ///   - transport: how to reach the device.
    ///   - configuration: client behaviour.
    ///   - logger: logger for the client.
    /// - Returns: a ready client.
    /// - Throws: `SMPTransportError` if the connection cannot be opened.
    public static func connect(
        _ transport: any SMPTransport,
        configuration: Configuration = .init(),
        logger: Logger? = nil
    ) async throws -> SMPClient {
        let connection = try await transport.connect()
        let client = SMPClient(connection: connection, configuration: configuration, logger: logger)
        await client.start()
        return client
    }

    /// Starts consuming the connection's frames; idempotent.
    public func start() {
        guard readerTask == nil else { return }
        let frames = connection.frames
        readerTask = Task { [weak self] in
            do {
                for try await bytes in frames { await self?.receive(bytes) }
                await self?.connectionEnded(SMPTransportError(.disconnected, "the connection closed"))
            } catch {
                await self?.connectionEnded(error)
            }
        }
    }

    /// The device's buffer parameters, read once per connection (OS command 6).
    ///
    /// A device that refuses the command (older Zephyr, MCUboot) or answers something malformed
    /// is not an error: frames are then sized to the link and windows start small.
    /// - Returns: the parameters, or `nil` when the device does not report them (or
    ///   ``Configuration/readsParameters`` is off).
    /// - Throws: `SMPTransportError` when the device does not answer at all (a silent device
    ///   is unreachable, not small); `CancellationError`.
    @discardableResult
    public func loadParameters() async throws -> DeviceParameters? {
        guard configuration.readsParameters else { return nil }
        if let parametersRead { return try await parametersRead.value }
        let read = Task { try await self.requestParameters() }
        parametersRead = read
        do {
            return try await read.value
        } catch {
            parametersRead = nil
            throw error
        }
    }

    private func requestParameters() async throws -> DeviceParameters? {
        do {
            let response = try await send(OSManagement.MCUmgrParameters())
            let parameters = DeviceParameters(
                bufferSize: Int(clamping: response.bufferSize),
                bufferCount: Int(clamping: response.bufferCount)
            )
            deviceParameters = parameters
            logger.debug(
                "device parameters",
                metadata: ["buf_size": "\(response.bufferSize)", "buf_count": "\(response.bufferCount)"]
            )
            return parameters
        } catch let error as SMPTransportError {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            logger.debug(
                "the device does not report MCUmgr parameters; sizing frames to the link",
                metadata: ["error": "\(error)"]
            )
            return nil
        }
    }

    /// Frames up to this size fit every Zephyr buffer (384 bytes by default, the smallest
    /// configured), so they are sent without reading the device's parameters first.
    static let sizeFittingEveryDevice = 384

    /// The largest frame to send: the link's limit, clamped to the device's `buf_size` (less
    /// what the link's framing occupies in that buffer).
    public var maximumFrameSize: Int {
        let link = connection.maximumFrameSize
        guard let buffer = deviceParameters?.bufferSize, buffer >= SMPHeader.size + 1 else { return link }
        let deviceLimit = buffer - connection.deviceBufferOverhead
        return connection.frameSizeFollowsDevice ? deviceLimit : min(link, deviceLimit)
    }

    /// Closes the connection; pending requests fail with `.disconnected`.
    public func close() async {
        readerTask?.cancel()
        await connection.close()
        connectionEnded(SMPTransportError(.disconnected, "the client was closed"))
    }

    // MARK: - Requests

    /// Sends a request and waits for its typed response.
    /// - Parameters:
    ///   - request: the request.
    ///   - timeout: per-attempt timeout; `nil` uses the configuration's.
    ///   - retries: attempts after a timeout; `nil` uses the configuration's. A request that is not
    ///     idempotent (`SMPRequest.isIdempotent`) is sent once whatever this says.
    /// - Returns: the device's response.
    /// - Throws: `SMPDeviceError` when the device refuses; `SMPTransportError` (`.timeout`,
    ///   `.outcomeUnknown` for a request that is not idempotent, `.disconnected`,
    ///   `.frameTooLarge`) for link failures; `SMPError` for malformed answers;
    ///   `CancellationError` if the calling task is cancelled.
    public func send<R: SMPRequest>(_ request: R, timeout: Duration? = nil, retries: Int? = nil) async throws
        -> R.Response
    {
        try await submit(request, timeout: timeout, retries: retries).response()
    }

    /// Sends a request now and returns a handle to await its answer later.
    ///
    /// The first attempt is on the link before this returns, so requests submitted one after
    /// another leave in that order — what a pipelined transfer needs, since the device refuses
    /// chunks that arrive out of order. Retries after timeouts continue in the background.
    /// - Parameters:
    ///   - request: the request.
    ///   - timeout: per-attempt timeout; `nil` uses the configuration's.
    ///   - retries: attempts after a timeout; `nil` uses the configuration's.
    ///   - resendingRefusals: send again after `EBUSY` or `ENOMEM` answers (with a growing
    ///     pause); `false` hands them to the caller.
    /// - Returns: the handle.
    /// - Throws: `SMPTransportError` `.frameTooLarge` or `.disconnected`, an encoding `SMPError`.
    public func submit<R: SMPRequest>(
        _ request: R,
        timeout: Duration? = nil,
        retries: Int? = nil,
        resendingRefusals: Bool = true
    ) async throws -> SMPPendingResponse<R> {
        let timeout = timeout ?? configuration.timeout
        // A request that must not happen twice is sent once, whatever the caller asks.
        let retries = request.isIdempotent ? max(0, retries ?? configuration.retries) : 0
        let sentVersion = version
        let promise = ResponsePromise()
        let id = try await start(request, timeout: timeout, retries: retries, waiter: .promise(promise))
        return SMPPendingResponse(
            client: self,
            id: id,
            promise: promise,
            request: request,
            sentVersion: sentVersion,
            timeout: timeout,
            retries: retries,
            resendsRefusals: resendingRefusals
        )
    }

    /// Registers a request and sends its first attempt; its watchdog sends the others.
    /// - Parameter timeout: per-attempt timeout; `nil` when the caller times the request out
    ///   itself (a transfer's driver, with one timer for all its chunks): no watchdog then.
    /// - Returns: the request's identifier.
    func start<R: SMPRequest>(
        _ request: R,
        timeout: Duration?,
        retries: Int,
        waiter: ResponseWaiter
    ) async throws -> Int {
        try checkOpen()
        guard let responseOperation = R.operation.response else {
            throw SMPError(
                .unexpectedOperation,
                "\(R.group) command \(R.command) is not a request (a response operation)"
            )
        }
        // Encoded once, before anything is registered (to fail early and to size-check); every
        // attempt only rewrites the header's version and sequence number.
        let frame = try SMPFrame.request(request, sequence: 0, version: version).bytes
        return try await start(
            encoded: frame,
            expectation: Expectation(group: R.group, command: R.command, operation: responseOperation),
            type: "\(R.self)",
            timeout: timeout,
            retries: retries,
            idempotent: request.isIdempotent,
            waiter: waiter
        )
    }

    /// Refuses a request on a connection known to be closed.
    /// - Throws: the closing error, marked as nothing sent.
    func checkOpen() throws {
        if let closedError {
            // Known closed before this request was handed over: it was not sent.
            guard var closed = closedError as? SMPTransportError else { throw closedError }
            closed.nothingSent = true
            throw closed
        }
    }

    /// Registers an encoded request and sends its first attempt: the part of every request that
    /// does not depend on its type (typed requests, and the raw frames of ``exchange(_:timeout:)``).
    /// - Parameters:
    ///   - frame: the whole frame; its version and sequence number are rewritten per attempt.
    ///   - expectation: the answer's group, command and operation.
    ///   - type: the request's name for messages (`Echo`, `raw`).
    ///   - timeout: per attempt; `nil` when the caller times the request out.
    ///   - retries: attempts after a timeout.
    ///   - idempotent: whether it may be sent twice.
    ///   - waiter: whoever takes the answer.
    /// - Returns: the request's identifier.
    /// - Throws: `SMPTransportError` `.frameTooLarge`, or a send failure.
    func start(
        encoded frame: consuming [UInt8],
        expectation: Expectation,
        type: String,
        timeout: Duration?,
        retries: Int,
        idempotent: Bool,
        waiter: ResponseWaiter
    ) async throws -> Int {
        if frame.count > Self.sizeFittingEveryDevice && deviceParameters == nil {
            // A large request needs the device's buffer size; a failure shows on the request.
            _ = try? await loadParameters()
        }
        let limit = maximumFrameSize
        guard frame.count <= limit else {
            throw SMPTransportError.frameTooLarge(
                size: frame.count,
                limit: limit,
                "\(expectation.group) command \(expectation.command) needs \(frame.count) bytes; the limit is \(limit)"
            )
        }
        let id = pending.add(waiter)
        timeouts[id] = RequestTimeout(
            // Moved, not copied: the first attempt then rewrites its header in place.
            frame: frame,
            expectation: expectation,
            name: "\(expectation.group) command \(expectation.command) (\(type))",
            timeout: timeout,
            retries: retries,
            idempotent: idempotent
        )
        await sendAttempt(id)
        return id
    }

    /// Sends the request's next attempt; `false` when the request is already over (answered or
    /// failed). Its timeout starts when the send returns: a link that holds a write back (a full
    /// BLE controller buffer) slows a request, it does not fail it.
    @discardableResult
    func sendAttempt(_ id: Int) async -> Bool {
        guard pending.contains(id), var entry = timeouts[id] else { return false }
        guard let sequence = pending.attempt(id, expecting: entry.expectation) else {
            fail(id, SMPTransportError(.sendFailed, "all 256 sequence numbers are in flight"))
            return false
        }
        // Taken out of the table while it is sent, so the header is rewritten in place.
        var bytes = entry.frame
        entry.frame = []
        timeouts[id] = entry
        SMPFrame.restamp(&bytes, version: version, sequence: sequence)
        if entry.attempt > 0 {
            logger.debug(
                "no answer; sending again",
                metadata: [
                    "attempt": "\(entry.attempt + 1)", "sequence": "\(sequence)", "group": "\(entry.expectation.group)",
                    "command": "\(entry.expectation.command)",
                ]
            )
        }
        groupLogger(entry.expectation.group).trace("send", metadata: ["frame": "\(describe(bytes))"])
        do {
            try await connection.send(bytes)
        } catch {
            fail(id, error)
            return false
        }
        guard timeouts[id] != nil else { return true }  // answered while it was sent
        timeouts[id]?.frame = bytes
        guard let timeout = entry.timeout else { return true }  // its caller times it out
        let deadline = configuration.clock.elapsed() + timeout
        timeouts[id]?.deadline = deadline
        watch(id, deadline: deadline)
        return true
    }

    /// Ends a request with an error (timeout, send failure, cancellation).
    func fail(_ id: Int?, _ error: any Error) {
        guard let id else { return }
        unwatch(id)
        pending.remove(id)?.resolve(.failure(error))
    }

    /// Forgets a request without a word to whoever waits for it: its answer, if one still comes,
    /// is dropped, and it is not sent again (a transfer abandoning a chunk it will send again, or
    /// no longer needs).
    /// - Parameter id: the request.
    func withdraw(_ id: Int) {
        unwatch(id)
        pending.remove(id)
    }

    /// The logger of one group (`mcumgr.group.image`, …), made on first use.
    func groupLogger(_ group: SMPGroup) -> Logger {
        if let existing = groupLoggers[group] { return existing }
        let made = configuration.makeLogger("mcumgr.group.\(group.name.replacingOccurrences(of: " ", with: "-"))")
        groupLoggers[group] = made
        return made
    }

    /// Called by a handle when the device refused; returns whether to resend (`EBUSY` or
    /// `ENOMEM` up to the busy retries, `rc 13` once as v1).
    func shouldResend(after error: SMPDeviceError, sentVersion: SMPVersion, busyAttempts: Int) -> Bool {
        groupLogger(error.requestGroup).debug("device refused", metadata: ["error": "\(error)"])
        if error.isTransientRefusal && busyAttempts < configuration.busyRetries {
            logger.debug(
                "device busy or out of buffers; retrying",
                metadata: ["attempt": "\(busyAttempts + 1)", "group": "\(error.requestGroup)", "rc": "\(error)"]
            )
            return true
        }
        if error.returnCode == .protocolVersionTooNew && sentVersion != .v1 {
            logger.info("device refused SMP v2 (rc 13); falling back to v1")
            version = .v1
            return true
        }
        return false
    }

    // MARK: - Receiving

    private func receive(_ bytes: [UInt8]) {
        let frame: SMPFrame
        do {
            frame = try SMPFrame(parsing: bytes)
        } catch {
            logger.debug("dropping malformed frame", metadata: ["error": "\(error)", "bytes": "\(bytes.count)"])
            return
        }
        groupLogger(frame.header.group).trace("receive", metadata: ["frame": "\(describe(bytes))"])
        switch pending.match(frame.header) {
        case .answered(let id, let waiter):
            unwatch(id)
            if frame.header.version == .v1 && version != .v1 {
                logger.info("device answers in SMP v1; using v1 from now on")
                version = .v1
            }
            waiter.resolve(.success(frame))
        case .unknownSequence:
            logger.debug(
                "dropping a frame no request is waiting for (late or duplicate)",
                metadata: ["sequence": "\(frame.header.sequence)"]
            )
        case .mismatched(let expected):
            logger.debug(
                "dropping a frame whose sequence matches but not its command",
                metadata: ["sequence": "\(frame.header.sequence)", "expected": "\(expected.group)/\(expected.command)"]
            )
        }
    }

    private func connectionEnded(_ error: any Error) {
        if closedError == nil { closedError = error }
        for entry in timeouts.values { entry.watchdog?.cancel() }
        timeouts.removeAll()
        for waiter in pending.removeAll() { waiter.resolve(.failure(error)) }
    }

    func describe(_ bytes: [UInt8]) -> String {
        guard let frame = try? SMPFrame(parsing: bytes) else { return "\(bytes.count) bytes (unparsable)" }
        let header = frame.header
        let payload = (try? frame.payloadValue()).map { $0.description } ?? "\(frame.payload.count) bytes"
        return
            "\(header.version) \(header.operation) group=\(header.group.rawValue) cmd=\(header.command) seq=\(header.sequence) len=\(header.length) \(payload)"
    }
}
