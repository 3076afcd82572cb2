import Foundation
import Logging
import SMPCore
import SMPLink

extension SMPClient {
    /// Uploads data in chunks that exactly fill the frame limit, keeping a window of requests
    /// in flight, and reports what happens.
    ///
    /// The session-opening chunk goes alone with a long timeout (the device may erase a whole
    /// slot first, or answer with the offset of an interrupted upload it can resume). Then
    /// chunks are pipelined; the device's answers drive everything:
    /// - the window starts at what ``TransferOptions/window`` forces, else at the device's
    ///   `buf_count − 1` (1, and frames within 384 bytes, when the device does not say); `ENOMEM`, `EBUSY` or a chunk without an answer halve it and sending
    ///   continues from the device's offset, and it grows back while answers flow. Back-pressure
    ///   alone never fails an upload; a device silent for the client's timeout × (retries + 1)
    ///   does;
    /// - an answer of offset 0 mid-transfer restarts the session; a refused chunk whose error
    ///   names the expected offset (FS) resumes there.
    ///
    /// A ``TransferControl`` pauses the upload after the chunks in flight and resumes it from the
    /// device's offset. Cancelling the consuming task cancels the upload.
    ///
    /// The decisions are the upload engine's pure state machine's (`UploadStateMachine`, tested by
    /// tables); the client only sends, matches answers, times requests out and retries.
    /// - Parameters:
    ///   - upload: what to upload and how to build its requests.
    ///   - options: window, alignment, timeouts.
    ///   - control: pauses and resumes the upload while it runs.
    /// - Returns: the events; the sequence finishes when the device has confirmed every byte, or
    ///   throws the first fatal error (`SMPDeviceError`, `SMPTransportError`…).
    public nonisolated func upload<U: ChunkedUpload>(
        _ upload: U,
        options: TransferOptions = .init(),
        control: TransferControl? = nil
    ) -> AsyncThrowingStream<TransferEvent, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    try await self.runUpload(upload, options: options, control: control) { continuation.yield($0) }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Uploads and waits for completion, for callers that do not need the events.
    /// - Parameters:
    ///   - upload: what to upload.
    ///   - options: window, alignment, timeouts.
    ///   - control: pauses and resumes the upload while it runs.
    /// - Returns: the final progress (bytes sent versus confirmed).
    /// - Throws: as ``upload(_:options:control:)``.
    @discardableResult
    public nonisolated func uploadAndWait<U: ChunkedUpload>(
        _ upload: U,
        options: TransferOptions = .init(),
        control: TransferControl? = nil
    ) async throws -> TransferProgress {
        var last: TransferProgress?
        for try await event in self.upload(upload, options: options, control: control) {
            if case .progress(let progress) = event { last = progress }
        }
        // A cancelled consumer's stream just ends: that is no finished upload.
        try Task.checkCancellation()
        return last
            ?? TransferProgress(bytesConfirmed: 0, totalBytes: upload.data.count, bytesSent: 0, bytesPerSecond: 0)
    }

    /// The window a transfer starts with and never exceeds: the one forced, else the device's
    /// `buf_count − 1` (its buffers hold requests and answers alike), else 1.
    ///
    /// A device that does not report its buffers may have one: MCUboot's serial recovery reads
    /// one message, handles it and only then reads again, and drops what arrives meanwhile — so
    /// an unknown device is not pipelined (`window` still forces it).
    func transferWindow(forced: Int?) -> AdaptiveWindow {
        if let forced { return AdaptiveWindow(initial: forced, ceiling: forced) }
        guard let count = deviceParameters?.bufferCount else { return AdaptiveWindow(initial: 1, ceiling: 1) }
        let fits = max(1, count - 1)
        return AdaptiveWindow(initial: fits, ceiling: fits)
    }

    /// Runs one upload: the driver performs what the engine's pure state machine decides.
    ///
    /// Compiled once more for each upload kind of this module: called from another module (the
    /// command line, an app) the generic engine ran unspecialised, looking up generic type
    /// metadata at run time for every chunk; this way the common kinds run their own code.
    @_specialize(where U == ImageUpload)
    @_specialize(where U == FileUpload)
    private nonisolated func runUpload<U: ChunkedUpload>(
        _ upload: U,
        options: TransferOptions,
        control: TransferControl?,
        report: @escaping @Sendable (TransferEvent) -> Void
    ) async throws {
        var driver = try await UploadDriver(upload, options: options, control: control, client: self, report: report)
        try await driver.run()
    }
}
