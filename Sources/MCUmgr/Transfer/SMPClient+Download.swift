import Foundation
import SMPCore
import SMPLink

/// What a download reports: progress while bytes arrive, then the file's contents once.
public enum DownloadEvent: Sendable, Hashable {
    /// Bytes received so far (``TransferProgress/bytesConfirmed``) of the file's length.
    case progress(TransferProgress)
    /// Every byte arrived; the file's contents. Always the last event.
    case finished(Data)
}

extension SMPClient {
    /// Downloads a file from the device's file system (FS group, command 0), keeping a window of
    /// requests in flight, and reports progress followed by the contents.
    ///
    /// The request at offset 0 goes alone: its answer carries the file's length (`len`) and shows
    /// how many bytes the device puts in one answer. Then up to `options.window` requests (by default
    /// the device's `buf_count − 1`) go out at predicted offsets. Each answer's `data` is placed at
    /// the answer's own `off`; the device is the truth, so a short answer leaves a gap that is
    /// requested again, and a longer one than predicted widens the stride. The download ends when
    /// every byte of `len` has arrived; an empty file ends with the first answer. Cancelling the
    /// consuming task cancels the download.
    /// - Parameters:
    ///   - name: the path on the device, e.g. `/lfs1/log.txt`.
    ///   - options: the window and the timeout of each request (``TransferOptions/chunkTimeout``);
    ///     alignment, frame size and restarts do not apply to downloads.
    /// - Returns: ``DownloadEvent/progress(_:)`` updates, then ``DownloadEvent/finished(_:)``;
    ///   throws the first failure (`SMPDeviceError` such as FILE_NOT_FOUND,
    ///   `SMPTransportError`, or `SMPError` when the device's answers do not add up).
    public nonisolated func download(
        name: String,
        options: TransferOptions = .init()
    ) -> AsyncThrowingStream<DownloadEvent, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    let data = try await self.runDownload(name: name, options: options) {
                        continuation.yield(.progress($0))
                    }
                    continuation.yield(.finished(data))
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Downloads a file and returns its contents, for callers that do not need progress.
    /// - Parameters:
    ///   - name: the path on the device.
    ///   - options: window and timeouts.
    /// - Returns: the file's contents.
    /// - Throws: as ``download(name:options:)``.
    public nonisolated func downloadAndWait(name: String, options: TransferOptions = .init()) async throws -> Data {
        for try await event in download(name: name, options: options) {
            if case .finished(let data) = event { return data }
        }
        // A cancelled consumer's stream just ends: say so, not "disconnected".
        try Task.checkCancellation()
        throw SMPTransportError(.disconnected, "the download of \(name) stopped before it finished")
    }

    /// Runs one download: the driver performs what the download's pure state machine decides.
    private nonisolated func runDownload(
        name: String,
        options: TransferOptions,
        report: @escaping @Sendable (TransferProgress) -> Void
    ) async throws -> Data {
        var driver = try await DownloadDriver(name: name, options: options, client: self, report: report)
        return try await driver.run()
    }
}

/// The reassembly state of one download, as a pure state machine (no I/O, no clocks).
///
/// Tracks which bytes arrived (as disjoint ranges), which ranges are requested, and the stride:
/// the most data the device has put in one answer. The next request goes to the lowest byte
/// neither received nor requested, so a short or misplaced answer leaves a gap that is
/// requested again.
struct DownloadAssembly: Sendable {
    let length: Int
    private(set) var data: Data
    /// Disjoint, sorted ranges of received bytes.
    private(set) var receivedRanges: [Range<Int>] = []
    /// Requests in flight: start offset → predicted range.
    private(set) var inFlight: [Int: Range<Int>] = [:]
    /// The most data bytes seen in one answer: the predicted size of the next.
    private(set) var stride = 0
    /// Answers that carried no new bytes in a row (a device that keeps answering with nothing).
    private var emptyAnswers = 0

    init(length: Int) {
        self.length = length
        data = Data(count: length)
    }

    var received: Int { receivedRanges.reduce(0) { $0 + $1.count } }
    var isComplete: Bool { receivedRanges == [0..<length] || length == 0 }

    /// Places an answer's bytes at its offset.
    /// - Throws: `SMPError` when the device keeps answering with no data it has not sent before.
    mutating func place(offset: Int, data chunk: Data, requestedAt start: Int) throws(SMPError) {
        inFlight[start] = nil
        stride = max(stride, chunk.count)
        let end = min(length, offset + chunk.count)
        guard offset < end else {
            try noProgress(at: offset)
            return
        }
        let before = received
        data.replaceSubrange(offset..<end, with: chunk.prefix(end - offset))
        insert(offset..<end)
        if received == before { try noProgress(at: offset) } else { emptyAnswers = 0 }
    }

    private mutating func noProgress(at offset: Int) throws(SMPError) {
        emptyAnswers += 1
        if emptyAnswers > 8 {
            throw SMPError(
                .invalidResponse,
                "the device answered \(emptyAnswers) times without new data (last at offset \(offset) of \(length))"
            )
        }
    }

    private mutating func insert(_ range: Range<Int>) {
        var merged = range
        var kept: [Range<Int>] = []
        for existing in receivedRanges {
            if existing.upperBound < merged.lowerBound || existing.lowerBound > merged.upperBound {
                kept.append(existing)
            } else {
                merged = min(existing.lowerBound, merged.lowerBound)..<max(existing.upperBound, merged.upperBound)
            }
        }
        kept.append(merged)
        receivedRanges = kept.sorted { $0.lowerBound < $1.lowerBound }
    }

    private func isCovered(_ offset: Int) -> Range<Int>? {
        if let range = receivedRanges.first(where: { $0.contains(offset) }) { return range }
        return inFlight.values.first { $0.contains(offset) }
    }

    /// The next range to request: from the lowest byte neither received nor requested, one
    /// stride long or up to the next covered byte.
    func nextRequest() -> (start: Int, size: Int)? {
        var offset = 0
        while offset < length {
            if let covering = isCovered(offset) {
                offset = covering.upperBound
                continue
            }
            let covered = (receivedRanges + Array(inFlight.values)).map(\.lowerBound).filter { $0 > offset }
            let end = min(length, offset + max(1, stride), covered.min() ?? length)
            return (offset, end - offset)
        }
        return nil
    }

    /// Records a request in flight.
    mutating func request(start: Int, size: Int) {
        inFlight[start] = start..<start + size
    }

    /// Requests whose predicted range has wholly arrived through other answers; they are dropped.
    mutating func abandonCovered() -> [Int] {
        let done = inFlight.filter { _, range in
            receivedRanges.contains { $0.lowerBound <= range.lowerBound && $0.upperBound >= range.upperBound }
        }.map(\.key)
        for start in done { inFlight[start] = nil }
        return done.sorted()
    }

    /// Whether a request that failed still mattered (it was in flight and not abandoned).
    mutating func requestFailed(start: Int) -> Bool {
        inFlight.removeValue(forKey: start) != nil
    }
}
