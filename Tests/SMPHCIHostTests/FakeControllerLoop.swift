import Foundation
import SMPBytes
import SMPHCI

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The fake's thread: accepts one host, reads and answers it until the host leaves or the test
/// stops the fake; then closes both sockets (only here, so no descriptor is closed under a poll).
struct FakeControllerLoop {
    let state: Locked<FakeControllerState>
    let unixPath: String?

    func run() {
        defer { closeEverything() }
        guard let client = accept() else { return }
        var decoder = H4Decoder()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !state.withLock({ $0.stopped }) {
            guard wait(client) else { continue }
            let count = buffer.withUnsafeMutableBytes { read(client, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            decoder.append(buffer[0..<count])
            do {
                while let packet = try decoder.next() { state.withLock { $0.handle(packet) } }
            } catch {
                // Our host wrote bytes that are not H4: the test sees it in what was received.
                return
            }
        }
    }

    /// Waits for the host, a poll slice at a time so that a stopped fake ends.
    private func accept() -> Int32? {
        let listener = state.withLock { $0.listener }
        while !state.withLock({ $0.stopped }) {
            guard wait(listener) else { continue }
            let client = Self.accept(listener)
            guard client >= 0 else { return nil }
            // One host per fake: a host opening again finds nothing listening, at once.
            state.withLock { $0.listener = -1 }
            _ = close(listener)
            if let unixPath { _ = unlink(unixPath) }
            var one: Int32 = 1
            _ = setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            state.withLock { $0.client = client }
            return client
        }
        return nil
    }

    private static func accept(_ listener: Int32) -> Int32 {
        #if canImport(Glibc)
            Glibc.accept(listener, nil, nil)
        #else
            Darwin.accept(listener, nil, nil)
        #endif
    }

    private func wait(_ fd: Int32) -> Bool {
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&pfd, 1, 100) > 0
    }

    private func closeEverything() {
        let (listener, client) = state.withLock { state in
            defer {
                state.listener = -1
                state.client = -1
                state.stopped = true
            }
            return (state.listener, state.client)
        }
        if listener >= 0 { _ = close(listener) }
        if client >= 0 { _ = close(client) }
        if let unixPath { _ = unlink(unixPath) }
    }
}
