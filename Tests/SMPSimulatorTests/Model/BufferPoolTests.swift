import Testing

@testable import SMPSimulator

@Suite("BufferPool")
struct BufferPoolTests {
    /// `take()` mutates the pool, which `#expect` cannot do inside its expression.
    static func take(_ pool: inout BufferPool) -> Bool { pool.take() }

    @Test("take one buffer at a time until none is free; giving one back frees it again")
    func takeAndGive() {
        var pool = BufferPool(capacity: 4)
        #expect(pool.free == 4)
        for held in 1...4 {
            #expect(Self.take(&pool))
            #expect(pool.held == held)
            #expect(pool.free == 4 - held)
        }
        // Zephyr never waits for a buffer: an empty pool refuses at once and stays as it was.
        #expect(!Self.take(&pool))
        #expect(pool.held == 4)
        #expect(pool.free == 0)
        pool.give()
        #expect(pool.free == 1)
        #expect(Self.take(&pool))
        #expect(pool.free == 0)
    }

    @Test("taking several takes at most what is free")
    func takeSeveral() {
        var pool = BufferPool(capacity: 4)
        pool.take(3)
        #expect(pool.held == 3)
        pool.take(5)
        #expect(pool.held == 4)
        #expect(pool.free == 0)
    }

    @Test("giving back more than is held frees every buffer and never counts below zero")
    func giveSeveral() {
        var pool = BufferPool(capacity: 4)
        pool.take(3)
        pool.give(2)
        #expect(pool.held == 1)
        pool.give(5)
        #expect(pool.held == 0)
        #expect(pool.free == 4)
    }

    @Test("reset frees every buffer, as a reboot loses RAM")
    func reset() {
        var pool = BufferPool(capacity: 2)
        pool.take(2)
        #expect(!Self.take(&pool))
        pool.reset()
        #expect(pool.held == 0)
        #expect(pool.free == 2)
        #expect(Self.take(&pool))
    }

    @Test("a pool has at least one buffer", arguments: [0, -3])
    func capacityAtLeastOne(capacity: Int) {
        var pool = BufferPool(capacity: capacity)
        #expect(pool.capacity == 1)
        #expect(Self.take(&pool))
        #expect(!Self.take(&pool))
    }

    @Test("an unlimited pool always has a buffer, and still counts those held")
    func unlimited() {
        var pool = BufferPool(capacity: nil)
        #expect(pool.capacity == nil)
        #expect(pool.free == Int.max)
        for _ in 0..<1000 { #expect(Self.take(&pool)) }
        pool.take(50)
        #expect(pool.held == 1050)
        #expect(pool.free == Int.max)
        pool.give(1050)
        #expect(pool.held == 0)
        pool.take(3)
        pool.reset()
        #expect(pool.held == 0)
    }
}
