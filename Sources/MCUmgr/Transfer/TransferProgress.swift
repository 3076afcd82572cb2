/// How far a transfer has come.
public struct TransferProgress: Sendable, Hashable {
    /// Bytes the device has confirmed (its reported offset).
    public var bytesConfirmed: Int
    /// Bytes in the whole transfer.
    public var totalBytes: Int
    /// Data bytes put on the wire so far, re-sent ones included (≥ `bytesConfirmed`).
    public var bytesSent: Int
    /// Confirmed bytes per second since the transfer started.
    public var bytesPerSecond: Double
    /// Estimated time to completion at the current rate, when a rate is known.
    public var estimatedTimeRemaining: Duration?

    /// Creates a progress value.
    /// - Parameters:
    ///   - bytesConfirmed: bytes the device confirmed.
    ///   - totalBytes: bytes in the transfer.
    ///   - bytesSent: data bytes sent, re-sent ones included.
    ///   - bytesPerSecond: confirmed bytes per second.
    ///   - estimatedTimeRemaining: time to completion, if known.
    public init(
        bytesConfirmed: Int,
        totalBytes: Int,
        bytesSent: Int,
        bytesPerSecond: Double,
        estimatedTimeRemaining: Duration? = nil
    ) {
        self.bytesConfirmed = bytesConfirmed
        self.totalBytes = totalBytes
        self.bytesSent = bytesSent
        self.bytesPerSecond = bytesPerSecond
        self.estimatedTimeRemaining = estimatedTimeRemaining
    }

    /// Completed fraction, 0...1.
    public var fraction: Double { totalBytes == 0 ? 1 : Double(bytesConfirmed) / Double(totalBytes) }
}

/// Options for a chunked transfer.
public struct TransferOptions: Sendable, Hashable {
    /// Requests in flight at once, forced; `nil` (the default) starts at the device's
    /// `buf_count − 1`. An upload shrinks its window on back-pressure and grows it back, never
    /// above this.
    public var window: Int?
    /// Round chunk sizes down to a multiple of this (the device's flash write alignment), so the
    /// offsets the device returns can be predicted while pipelining. 1 = no alignment.
    public var alignment: Int
    /// Timeout of the first request, during which the device may erase the whole slot.
    public var firstChunkTimeout: Duration
    /// Timeout of the other requests; `nil` uses the client's.
    public var chunkTimeout: Duration?
    /// A frame size below the client's limit (e.g. a BLE device without reassembly); `nil` = the client's.
    public var maximumFrameSize: Int?
    /// How often the device may restart the session (answer offset 0 mid-transfer) before the
    /// transfer fails.
    public var maximumRestarts: Int
    /// The most data bytes in the session-opening chunk. When the device resumes an
    /// interrupted upload it discards that chunk's data, so a short opening chunk keeps the
    /// bytes sent twice after a disconnect under one window; it must hold the 32-byte MCUboot
    /// header, which Zephyr checks. `nil` fills the frame like every other chunk.
    public var openingChunkLimit: Int?

    /// Creates options.
    /// - Parameters:
    ///   - window: requests in flight at once; `nil` derives it from the device.
    ///   - alignment: chunk size multiple.
    ///   - firstChunkTimeout: timeout of the first request (slot erase).
    ///   - chunkTimeout: timeout of later requests.
    ///   - maximumFrameSize: a lower frame limit.
    ///   - maximumRestarts: session restarts tolerated.
    ///   - openingChunkLimit: the most data in the session-opening chunk (at least 32).
    public init(
        window: Int? = nil,
        alignment: Int = 1,
        firstChunkTimeout: Duration = .seconds(40),
        chunkTimeout: Duration? = nil,
        maximumFrameSize: Int? = nil,
        maximumRestarts: Int = 5,
        openingChunkLimit: Int? = 512
    ) {
        self.window = window.map { max(1, $0) }
        self.alignment = alignment
        self.firstChunkTimeout = firstChunkTimeout
        self.chunkTimeout = chunkTimeout
        self.maximumFrameSize = maximumFrameSize
        self.maximumRestarts = maximumRestarts
        self.openingChunkLimit = openingChunkLimit.map { max(32, $0) }
    }
}
