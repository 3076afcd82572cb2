/// Zephyr's SMP buffer pool (`NET_BUF_POOL_DEFINE(pkt_pool, NETBUF_COUNT, NETBUF_SIZE, …)`): one
/// pool for every request a transport receives and every response the SMP work queue builds.
///
/// Allocation never waits (`K_NO_WAIT`): a transport that finds the pool empty drops the request,
/// and a request whose response finds it empty is answered `ENOMEM` in its own buffer. Pure
/// counting; the device actor decides when buffers are taken and given back.
struct BufferPool: Sendable, Hashable {
    /// The number of buffers, or `nil` for an unlimited pool.
    let capacity: Int?
    /// Buffers taken and not yet given back.
    private(set) var held = 0

    /// Creates an empty pool.
    /// - Parameter capacity: the number of buffers (`nil`: unlimited).
    init(capacity: Int?) {
        self.capacity = capacity.map { max(1, $0) }
    }

    /// Buffers free now (`Int.max` for an unlimited pool).
    var free: Int { capacity.map { $0 - held } ?? Int.max }

    /// Takes one buffer.
    /// - Returns: `false` when none is free.
    mutating func take() -> Bool {
        guard free > 0 else { return false }
        held += 1
        return true
    }

    /// Takes `count` buffers known to be free.
    mutating func take(_ count: Int) {
        held += min(count, free)
    }

    /// Gives buffers back.
    mutating func give(_ count: Int = 1) {
        held = max(0, held - count)
    }

    /// Every buffer free again (RAM is lost at a reboot).
    mutating func reset() {
        held = 0
    }
}
