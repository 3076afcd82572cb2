import Foundation
import MCUmgrFleet
import NIOCore
import NIOPosix
import PostgresNIO
import SMPBytes

extension PostgresRolloutStore {
    /// One line for a PostgreSQL failure, naming the server: what a person can act on, never
    /// PostgresNIO's `PSQLError(...)` dump (which also prints the query and the server's source
    /// file).
    /// - Parameters:
    ///   - error: what the connection or a query threw.
    ///   - address: the server, `HOST:PORT`.
    ///   - connecting: whether the connection was being opened (otherwise it was in use).
    static func describe(_ error: any Error, at address: String, connecting: Bool) -> String {
        guard let error = error as? PSQLError else {
            return (connecting ? "cannot reach PostgreSQL at \(address): " : "PostgreSQL at \(address): ")
                + reason(error)
        }
        switch error.code {
        case .connectionError:
            return "cannot reach PostgreSQL at \(address): \(error.underlying.map(reason) ?? "no connection")"
        case .serverClosedConnection, .uncleanShutdown, .clientClosedConnection:
            return connecting
                ? "PostgreSQL at \(address) closed the connection while it was opened"
                : "lost PostgreSQL at \(address): the connection closed mid-rollout"
        case .server:
            let message = error.serverInfo?[.message] ?? "an error"
            let state = error.serverInfo?[.sqlState].map { " (SQLSTATE \($0))" } ?? ""
            return "PostgreSQL at \(address): \(message)\(state)"
        case .authMechanismRequiresPassword:
            return "PostgreSQL at \(address) asks for a password: give it in the URL, postgres://USER:PASSWORD@…"
        case .sslUnsupported:
            return "PostgreSQL at \(address) does not offer TLS (sslmode=require)"
        default:
            return "PostgreSQL at \(address): \(error.code)"
        }
    }

    /// The cause of a failed connection, in the system's words (`connection refused`).
    private static func reason(_ error: any Error) -> String {
        switch error {
        case let error as NIOConnectionError:
            if let first = error.connectionErrors.first { return reason(first.error) }
            if error.dnsAError != nil || error.dnsAAAAError != nil { return "the host name does not resolve" }
            return "no address to connect to"
        case let error as IOError:
            // strerror's words, lower-cased as the rest of the line is ("connection refused").
            let words = String(cString: strerror(error.errnoCode))
            return words.prefix(1).lowercased() + words.dropFirst()
        case ChannelError.connectTimeout:
            return "no answer (the connection timed out)"
        case let error as ChannelError:
            return "\(error)"
        default:
            return "\(error)"
        }
    }

    /// The line for a connection that was lost between transactions.
    static func lost(_ address: String) -> String {
        "lost PostgreSQL at \(address): the connection closed mid-rollout"
    }

    /// Runs `body`, or gives up when it takes longer than `deadline`: `giveUp` runs (it closes
    /// the connection) and the caller gets a `RolloutStoreError` with `message` at once, while
    /// `body` (which may never return) is cancelled and left behind.
    static func withDeadline<T: Sendable>(
        _ deadline: Duration,
        message: String,
        giveUp: @escaping @Sendable () async -> Void,
        body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let pending = Locked<CheckedContinuation<T, any Error>?>(nil)
        let tasks = Locked<(work: Task<Void, Never>?, timer: Task<Void, Never>?)>((nil, nil))
        // Whichever ends first takes the continuation; the other finds it gone.
        @Sendable func finish(_ result: Result<T, any Error>) -> Bool {
            guard
                let continuation = pending.withLock({ value in
                    defer { value = nil }
                    return value
                })
            else {
                return false
            }
            continuation.resume(with: result)
            return true
        }
        return try await withCheckedThrowingContinuation { continuation in
            pending.withLock { $0 = continuation }
            let work = Task {
                let result: Result<T, any Error>
                do { result = .success(try await body()) } catch { result = .failure(error) }
                if finish(result) { tasks.withLock { $0.timer?.cancel() } }
            }
            let timer = Task {
                guard (try? await Task.sleep(for: deadline)) != nil else { return }
                guard finish(.failure(RolloutStoreError(message))) else { return }
                tasks.withLock { $0.work?.cancel() }
                await giveUp()
            }
            tasks.withLock { $0 = (work, timer) }
            // The work may have ended before the timer was stored: it could not cancel it then.
            if pending.withLock({ $0 == nil }) { timer.cancel() }
        }
    }
}
