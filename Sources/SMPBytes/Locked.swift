#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Android)
    import Android
#endif

/// A value behind a lock: the package's one lock type, shared by every class whose state is
/// touched from several threads (a read thread and the tasks that close it, a timer and a
/// waiter), so those classes hold a `let` of this and are checked `Sendable` themselves.
///
/// The standard library's `Synchronization.Mutex` would do, but it needs macOS 15 and the
/// package supports macOS 13. As swift-nio's `NIOLockedValueBox`, it is a class over a
/// `pthread_mutex_t` at a stable address (a mutex must not move), shared by every holder.
///
/// Keep `body` short, or block in it only where everyone who waits for the lock is meant to
/// wait (a `Locked(())` that keeps whole writes from interleaving). The lock is not recursive:
/// a thread that takes it again from inside `body` deadlocks, so callers resume continuations
/// and call out (handlers, `close`) after `withLock` returns.
package final class Locked<Value> {
    // Usable from inline code so that `withLock` is specialized in the calling module: the lock
    // sits on hot paths (every answer of an upload passes one).
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline var value: Value

    /// Puts a value behind a new lock.
    /// - Parameter value: the value.
    package init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let result = pthread_mutex_init(mutex, nil)
        precondition(result == 0, "pthread_mutex_init failed with \(result)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with the value, holding the lock.
    /// - Parameter body: reads or changes the value; what it returns is returned.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws (the lock is released first).
    @inlinable
    package func withLock<Result, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}

// Safe because `value` is read and written only inside `withLock`, under the mutex, and the
// mutex itself is never moved (it lives at its own allocation); a `Value` that is not
// `Sendable` could escape to another thread through `withLock`, hence the condition.
extension Locked: @unchecked Sendable where Value: Sendable {}
