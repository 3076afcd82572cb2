import Foundation
import SMPCore

/// Every decision of a pipelined download, as a pure state machine in the style of
/// ``UploadStateMachine``: states with their own data, one method per event returning an
/// ``Action``, traps for events that cannot happen, no clock and no I/O.
///
/// The policies: the request at offset 0 goes alone (its answer carries the file's length and
/// shows how many bytes the device puts in one answer); then up to the window's requests go out
/// at predicted offsets; each answer's bytes are placed at the answer's own offset (the device is
/// the truth), a short answer leaves a gap that is requested again and a longer one widens the
/// stride (``DownloadAssembly``); a device that keeps answering with no new bytes fails the
/// download.
struct DownloadStateMachine {
    /// What the driver does next.
    enum Action: Sendable, Hashable {
        /// Request offset 0 alone and call ``firstAnswered(length:offset:data:now:)``.
        case requestFirst
        /// Report, withdraw these requests (by start offset), then send what ``nextRequest()``
        /// gives and deliver the next answer.
        case request(Report)
        /// Report; the file's bytes are all here.
        case finish(Report, Data)
        /// The download failed.
        case fail(Failure)
    }

    struct Report: Sendable, Hashable {
        var progress: TransferProgress?
        var withdraw: [Int] = []
    }

    enum Failure: Sendable, Hashable {
        /// The device's answers do not add up.
        case invalidResponse(SMPError)
        /// A request that still mattered failed: the driver throws its error.
        case requestError
    }

    /// Receiving: the assembly, and the data bytes that arrived (duplicates included).
    struct Receiving: Sendable {
        var assembly: DownloadAssembly
        var bytesReceived: Int
    }

    enum State: Sendable {
        case idle
        case requestingFirst
        case receiving(Receiving)
        case finished
        case failed
        case modifying
    }

    let name: String
    /// Requests in flight at most.
    let window: Int
    private(set) var state: State = .idle
    /// Rates count from the start, parameters read included (as they always have).
    private var started: Duration = .zero

    /// Creates the machine of one download.
    /// - Parameters:
    ///   - name: the file's path on the device, for messages.
    ///   - window: requests in flight at most (at least 1).
    init(name: String, window: Int) {
        self.name = name
        self.window = max(1, window)
    }

    /// The download starts.
    /// - Parameter now: the clock.
    mutating func start(now: Duration) -> Action {
        guard case .idle = state else { preconditionFailure("start() in \(state)") }
        started = now
        state = .requestingFirst
        return .requestFirst
    }

    /// The answer to the request at offset 0.
    /// - Parameters:
    ///   - length: the file's length (`len`), which that answer must carry.
    ///   - offset: where its bytes go.
    ///   - data: its bytes.
    ///   - now: the clock.
    mutating func firstAnswered(length: UInt64?, offset: Int, data: Data, now: Duration) -> Action {
        guard case .requestingFirst = state else { preconditionFailure("firstAnswered in \(state)") }
        state = .failed
        guard let length else {
            return .fail(
                .invalidResponse(
                    SMPError(.invalidResponse, "the answer to a download at offset 0 of \(name) has no len")
                )
            )
        }
        guard length <= UInt64(Int32.max) else {
            return .fail(
                .invalidResponse(SMPError(.invalidResponse, "\(name) is \(length) bytes long, too large to download"))
            )
        }
        var receiving = Receiving(assembly: DownloadAssembly(length: Int(length)), bytesReceived: data.count)
        do throws(SMPError) {
            try receiving.assembly.place(offset: offset, data: data, requestedAt: 0)
        } catch {
            return .fail(.invalidResponse(error))
        }
        return proceed(receiving, report: Report(progress: progress(receiving, now: now)))
    }

    /// The next request to send while the window has room: its start and predicted size. Call
    /// ``requestSent(start:size:)`` once it is on the link.
    func nextRequest() -> (start: Int, size: Int)? {
        guard case .receiving(let receiving) = state, receiving.assembly.inFlight.count < window else { return nil }
        return receiving.assembly.nextRequest()
    }

    /// The request ``nextRequest()`` gave is on the link.
    mutating func requestSent(start: Int, size: Int) {
        guard case .receiving(var receiving) = state else { preconditionFailure("requestSent in \(state)") }
        state = .modifying
        receiving.assembly.request(start: start, size: size)
        state = .receiving(receiving)
    }

    /// An answer to the request at `start`.
    /// - Parameters:
    ///   - start: the request's offset.
    ///   - offset: the answer's own offset (`off`), where its bytes go.
    ///   - data: its bytes.
    ///   - now: the clock.
    mutating func answered(start: Int, offset: Int, data: Data, now: Duration) -> Action {
        guard case .receiving(var receiving) = state else { preconditionFailure("answered in \(state)") }
        state = .failed
        receiving.bytesReceived += data.count
        do throws(SMPError) {
            try receiving.assembly.place(offset: offset, data: data, requestedAt: start)
        } catch {
            return .fail(.invalidResponse(error))
        }
        if receiving.assembly.isComplete {
            return proceed(receiving, report: Report(progress: progress(receiving, now: now)))
        }
        let covered = receiving.assembly.abandonCovered()
        return proceed(receiving, report: Report(progress: progress(receiving, now: now), withdraw: covered))
    }

    /// A request failed (its retries spent, a refusal, the link dropped, or it was withdrawn).
    /// - Parameters:
    ///   - start: the request's offset.
    ///   - cancelled: whether the failure is a cancellation.
    mutating func failed(start: Int, cancelled: Bool) -> Action {
        guard case .receiving(var receiving) = state else { preconditionFailure("failed in \(state)") }
        state = .failed
        // An abandoned request's cancellation is expected; anything else is fatal.
        if receiving.assembly.requestFailed(start: start) && !cancelled { return .fail(.requestError) }
        return proceed(receiving, report: Report())
    }

    /// Finishes when every byte is here; otherwise keeps requesting, unless nothing is in flight
    /// and nothing is left to ask for.
    private mutating func proceed(_ receiving: Receiving, report: Report) -> Action {
        if receiving.assembly.isComplete {
            state = .finished
            return .finish(report, receiving.assembly.data)
        }
        state = .receiving(receiving)
        if receiving.assembly.inFlight.isEmpty && receiving.assembly.nextRequest() == nil {
            state = .failed
            let assembly = receiving.assembly
            return .fail(
                .invalidResponse(
                    SMPError(
                        .invalidResponse,
                        "the device stopped sending data for \(name) at \(assembly.received) of \(assembly.length) bytes"
                    )
                )
            )
        }
        return .request(report)
    }

    private func progress(_ receiving: Receiving, now: Duration) -> TransferProgress {
        let assembly = receiving.assembly
        let elapsed = (now - started) / .seconds(1)
        let rate = elapsed > 0 ? Double(assembly.received) / elapsed : 0
        let eta: Duration? = rate > 0 ? .seconds(Double(assembly.length - assembly.received) / rate) : nil
        return TransferProgress(
            bytesConfirmed: assembly.received,
            totalBytes: assembly.length,
            bytesSent: receiving.bytesReceived,
            bytesPerSecond: rate,
            estimatedTimeRemaining: eta
        )
    }
}
