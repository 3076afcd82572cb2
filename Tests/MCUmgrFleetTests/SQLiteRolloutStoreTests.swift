import Foundation
import MCUmgrConnect
import MCUmgrDFU
import SMPTestSupport
import Synchronization
import Testing

@testable import MCUmgrFleet

@Suite struct SQLiteRolloutStoreTests {
    /// The layout of every state file written before the layout's version was stored (issue 28),
    /// with a failure in the engine's words, as Python's own sqlite3 writes it: it opens, reads
    /// typed, and is marked layout 1.
    static let unversionedFile = """
        import sqlite3, sys
        db = sqlite3.connect(sys.argv[1])
        db.execute("CREATE TABLE rollouts (id TEXT PRIMARY KEY, file TEXT NOT NULL, mode TEXT NOT NULL, "
                   "versions TEXT NOT NULL, created_at REAL NOT NULL, updated_at REAL NOT NULL)")
        db.execute("CREATE TABLE devices (rollout TEXT NOT NULL, id TEXT NOT NULL, url TEXT NOT NULL, "
                   "position INTEGER NOT NULL, labels TEXT NOT NULL, status TEXT NOT NULL, phase TEXT, "
                   "attempts INTEGER NOT NULL, link_failures INTEGER NOT NULL, not_before REAL, failure_code TEXT, "
                   "failure_state TEXT, failure_message TEXT, version_before TEXT, version_after TEXT, "
                   "started_at REAL, ended_at REAL, worker TEXT, uploaded_bytes INTEGER NOT NULL, "
                   "first_started_at REAL, PRIMARY KEY (rollout, id))")
        db.execute("INSERT INTO rollouts VALUES ('abc123', 'app.bin', 'confirm-only', '1.1.0', 1, 2)")
        db.execute("INSERT INTO devices VALUES ('abc123', 'd0', 'udp://10.0.0.1:1337', 0, '{}', 'failed', "
                   "'wave-1', 3, 3, NULL, 'link failed', 'uploading', 'gone', '1.0.0', NULL, 5, 6, 'gw1', "
                   "1024, 4)")
        db.execute("PRAGMA user_version = %d" % int(sys.argv[2]))
        db.commit()
        """

    /// The version a running device said it runs is written at once, for that attempt only, and
    /// the first reading stays.
    @Test func aVersionReadIsWrittenOnlyForTheRunningAttemptAndTheFirstStays() async throws {
        let store = try await SQLiteRolloutStore(path: FleetHarness.scratch("state.sqlite"))
        let rollout = RolloutDescription(id: "r1", file: "app.bin", mode: "confirm-only", versions: ["2.0.0"])
        let devices = try Inventory(parsing: "udp://10.0.0.1:1337 d0\nudp://10.0.0.2:1337 d1\n").devices
        var records = try await store.prepare(rollout, devices: devices, retryFailed: false)
        records[0] = RolloutTransitions.start(records[0], phase: .wave(0), worker: "gw1", at: Date())
        try await store.save([records[0]], rollout: "r1")
        try await store.versionRead("r1", device: "d0", attempt: 2, worker: "gw1", version: "0.9.0")
        try await store.versionRead("r1", device: "d0", attempt: 1, worker: "gw2", version: "0.9.0")
        try await store.versionRead("r1", device: "d1", attempt: 0, worker: "gw1", version: "0.9.0")
        #expect(try await store.rollout("r1")?.1.map(\.versionBefore) == [nil, nil])
        try await store.versionRead("r1", device: "d0", attempt: 1, worker: "gw1", version: "1.0.0")
        try await store.versionRead("r1", device: "d0", attempt: 1, worker: "gw1", version: "2.0.0")
        #expect(try await store.rollout("r1")?.1.map(\.versionBefore) == ["1.0.0", nil])
        await store.close()
    }

    @Test func everyRolloutIsListedTheLastStartedFirst() async throws {
        let store = try await SQLiteRolloutStore(path: FleetHarness.scratch("list.sqlite"))
        try await FleetHarness.listsEveryRolloutNewestFirst(store)
    }

    @Test func aStateFileWrittenBeforeTheLayoutWasVersionedOpensAndReadsTyped() async throws {
        let path = FleetHarness.scratch("old.sqlite")
        _ = try await Peers.python(Self.unversionedFile, [path, "0"])
        let store = try await SQLiteRolloutStore(path: path)
        let (_, records) = try #require(try await store.rollout(nil))
        await store.close()
        let record = try #require(records.first)
        #expect(record.status == .failed && record.versionBefore == "1.0.0" && record.worker == "gw1")
        #expect(record.failure == AttemptFailure(code: .linkFailed, state: .uploading, message: "gone"))
        let version = try await Peers.python(
            "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute('PRAGMA user_version').fetchone()[0])",
            [path]
        )
        #expect(String(decoding: version, as: UTF8.self) == "1\n")
    }

    @Test func aStateFileOfANewerLayoutIsRefusedInOneLine() async throws {
        let path = FleetHarness.scratch("new.sqlite")
        _ = try await Peers.python(Self.unversionedFile, [path, "7"])
        let error = await #expect(throws: RolloutStoreError.self) { _ = try await SQLiteRolloutStore(path: path) }
        #expect(
            error?.message
                == "\(path) holds rollout state of layout 7, written by a newer mcumgr (this one reads up to 1): "
                + "use that mcumgr, or another --state"
        )
    }

    static let rollout = RolloutDescription(id: "abc123", file: "app.bin", mode: "confirm-only", versions: ["1.1.0"])

    static func devices(_ count: Int) throws -> [Inventory.Device] {
        try (0..<count).map {
            Inventory.Device(
                url: try ConnectionURL(parsing: "udp://10.0.0.\($0 + 1):1337"),
                name: "d\($0)",
                labels: ["n": "\($0)"]
            )
        }
    }

    @Test func recordsSurviveTheStoreAndResumeAsTheyWere() async throws {
        let path = FleetHarness.scratch("state.sqlite")
        let store = try await SQLiteRolloutStore(path: path)
        var records = try await store.prepare(Self.rollout, devices: try Self.devices(5), retryFailed: false)
        #expect(records.map(\.status) == Array(repeating: .pending, count: 5))
        records[0].status = .upgraded
        records[0].versionBefore = "1.0.0"
        records[0].versionAfter = "1.1.0"
        records[0].attempts = 1
        records[0].phase = .canary
        records[0].startedAt = Date(timeIntervalSince1970: 100)
        records[1].status = .failed
        records[1].failure = AttemptFailure(code: .deviceRejected, state: .uploading, message: "no")
        records[2].status = .running
        records[2].notBefore = Date(timeIntervalSince1970: 200)
        records[3].status = .skipped
        records[4].status = .unreachable
        try await store.save(records, rollout: Self.rollout.id)
        await store.close()

        let reopened = try await SQLiteRolloutStore(path: path)
        let (description, stored) = try #require(try await reopened.rollout(nil))
        #expect(description == Self.rollout)
        #expect(stored == records)
        let resumed = try await reopened.prepare(Self.rollout, devices: try Self.devices(5), retryFailed: false)
        #expect(resumed.map(\.status) == [.upgraded, .failed, .running, .pending, .unreachable])
        let retried = try await reopened.prepare(Self.rollout, devices: try Self.devices(5), retryFailed: true)
        #expect(retried.map(\.status) == [.upgraded, .pending, .running, .pending, .pending])
        #expect(retried[1].failure == nil)
        await reopened.close()
    }

    /// A record binds the name to the URL: the same name at another URL (another rack's
    /// `sim-001`) is another device, planned afresh; its record replaces the earlier one.
    @Test func aNameAtAnotherURLIsAnotherDevicePlannedAfresh() async throws {
        let path = FleetHarness.scratch("state.sqlite")
        let store = try await SQLiteRolloutStore(path: path)
        var records = try await store.prepare(Self.rollout, devices: try Self.devices(2), retryFailed: false)
        for index in records.indices {
            records[index].status = .upgraded
            records[index].attempts = 1
            records[index].versionBefore = "1.0.0"
            records[index].versionAfter = "1.1.0"
            records[index].endedAt = Date(timeIntervalSince1970: 100)
        }
        try await store.save(records, rollout: Self.rollout.id)
        var moved = try Self.devices(2)
        moved[0] = Inventory.Device(
            url: try ConnectionURL(parsing: "udp://10.0.1.1:1337"),
            name: "d0",
            labels: ["n": "0"]
        )
        let again = try await store.prepare(Self.rollout, devices: moved, retryFailed: false)
        #expect(again[0] == DeviceRecord(id: "d0", url: "udp://10.0.1.1:1337", position: 0, labels: ["n": "0"]))
        #expect(again[1] == records[1], "d1 is at its recorded URL: its record stands")
        #expect(try await store.rollout(nil)?.1 == again)
        await store.close()
    }

    @Test func aSecondWriterIsRefusedWhileTheFirstRuns() async throws {
        let path = FleetHarness.scratch("state.sqlite")
        let first = try await SQLiteRolloutStore(path: path)
        await #expect(throws: RolloutStoreError.self) { _ = try await SQLiteRolloutStore(path: path) }
        let reader = try await SQLiteRolloutStore(path: path, exclusive: false)
        await reader.close()
        await first.close()
        let again = try await SQLiteRolloutStore(path: path)
        await again.close()
    }

    /// The shared lock a status check (`isInUse`) takes, on a descriptor of its own, held.
    static func statusCheck(_ lockFile: String) throws -> Int32 {
        let descriptor = open(lockFile, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        try #require(descriptor >= 0)
        guard flock(descriptor, LOCK_SH | LOCK_NB) == 0 else {
            close(descriptor)
            throw RolloutStoreError("\(lockFile): a shared lock was refused")
        }
        return descriptor
    }

    /// A status check (`isInUse`, maybe of another process) holds a shared lock for an instant; a
    /// rollout starting in that instant waits for it rather than taking it for another rollout.
    /// The check's lock is let go at the rollout's first wait: the outcome hangs on that event,
    /// not on a time.
    @Test func aStatusCheckAtTheMomentARolloutStartsDoesNotRefuseIt() async throws {
        let path = FleetHarness.scratch("state.sqlite") + ".lock"
        let check = try Self.statusCheck(path)
        defer { close(check) }
        let waits = Mutex(0)
        let descriptor = try await SQLiteRolloutStore.lock(path, patience: 3) {
            waits.withLock { $0 += 1 }
            _ = flock(check, LOCK_UN)
        }
        defer { close(descriptor) }
        #expect(waits.withLock { $0 } == 1)
        // Now the rollout's: a status check finds it in use.
        #expect(SQLiteRolloutStore.isInUse(path: String(path.dropLast(".lock".count))))
    }

    /// Readers that never leave: the start is refused in a line that says so, after its waits,
    /// not as if another rollout ran.
    @Test func statusChecksThatHoldTheLockThroughEveryWaitRefuseTheStartSaying() async throws {
        let path = FleetHarness.scratch("state.sqlite") + ".lock"
        let check = try Self.statusCheck(path)
        defer { close(check) }
        let waits = Mutex(0)
        let error = await #expect(throws: RolloutStoreError.self) {
            _ = try await SQLiteRolloutStore.lock(path, patience: 3) { waits.withLock { $0 += 1 } }
        }
        #expect(waits.withLock { $0 } == 3)
        let message = error?.message ?? ""
        #expect(message.contains("status checks held the state file's lock all the while"), "\(message)")
        #expect(message.contains("(3 waits)"), "\(message)")
    }

    /// A rollout's lock is refused at once: no wait, the other process named.
    @Test func aRunningRolloutRefusesTheStartWithoutWaiting() async throws {
        let path = FleetHarness.scratch("state.sqlite")
        let first = try await SQLiteRolloutStore(path: path)
        let waits = Mutex(0)
        let error = await #expect(throws: RolloutStoreError.self) {
            _ = try await SQLiteRolloutStore.lock(path + ".lock", patience: 3) { waits.withLock { $0 += 1 } }
        }
        #expect(waits.withLock { $0 } == 0)
        #expect(error?.message.hasPrefix("another mcumgr fleet process runs a rollout") == true)
        await first.close()
    }

    /// A child process started while the store is open shares its lock file until it runs its
    /// program (here a `dup` of the descriptor stands for the child's copy): the store's close
    /// must still release the lock, so that this process can open the file again at once.
    @Test func closingReleasesTheLockThatAStartingChildShares() async throws {
        let path = FleetHarness.scratch("state.sqlite")
        let store = try await SQLiteRolloutStore(path: path)
        let lockFile = URL(fileURLWithPath: path + ".lock").resolvingSymlinksInPath().path
        let descriptors = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").compactMap(Int32.init)
        let held = try #require(
            descriptors.first {
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) == lockFile
            },
            "the store holds its lock file open"
        )
        let childsCopy = dup(held)
        try #require(childsCopy >= 0)
        defer { close(childsCopy) }
        await store.close()
        let again = try await SQLiteRolloutStore(path: path)
        await again.close()
    }

    @Test func aFileThatIsNotAStateFileIsRefused() async throws {
        let path = FleetHarness.scratch("junk.sqlite")
        try Data("this is not a database".utf8).write(to: URL(fileURLWithPath: path))
        await #expect(throws: RolloutStoreError.self) { _ = try await SQLiteRolloutStore(path: path) }
    }

    @Test func devicesLeavingTheInventoryAreNotPartOfTheRun() async throws {
        let path = FleetHarness.scratch("state.sqlite")
        let store = try await SQLiteRolloutStore(path: path)
        _ = try await store.prepare(Self.rollout, devices: try Self.devices(3), retryFailed: false)
        let fewer = try await store.prepare(
            Self.rollout,
            devices: Array(try Self.devices(3).reversed().prefix(2)),
            retryFailed: false
        )
        #expect(fewer.map(\.id) == ["d2", "d1"])
        #expect(fewer.map(\.position) == [0, 1])
        await store.close()
    }
}
