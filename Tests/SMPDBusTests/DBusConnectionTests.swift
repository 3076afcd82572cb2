import Foundation
import SMPBytes
import SMPTestSupport
import Testing

@testable import SMPDBus

#if canImport(Glibc)
    import Glibc
#endif

/// The connection against a real bus (a private dbus-daemon), and against dbus-python (Debian's
/// python3-dbus, the reference binding over libdbus) as the other side.
@Suite(.requiring(DBusTestBus.available, "needs dbus-daemon (apt-get install dbus-daemon)"))
struct DBusConnectionTests {
    static let service = "com.example.McumgrTest"
    static let path: DBusObjectPath = "/com/example/root/object"

    /// A connection owning `service` and exporting an object with methods, properties, a
    /// descriptor-returning method and an object manager above it.
    static func server(on bus: DBusTestBus, counter: LockedCounter) async throws -> DBusConnection {
        let server = try await DBusConnection.connect(to: try DBusAddress(bus.address))
        let reply = try await server.call(
            destination: "org.freedesktop.DBus",
            path: "/org/freedesktop/DBus",
            interface: "org.freedesktop.DBus",
            member: "RequestName",
            body: [.string(service), .uint32(4)]
        )
        #expect(reply.message.body == [.uint32(1)])
        server.addObjectManager(at: "/com/example/root")
        let interface = DBusInterface(
            name: "com.example.Echo",
            methods: [
                "Echo": DBusMethod(input: "s", output: "s") { call in DBusMethodReply([call.arguments[0]]) },
                "Fail": DBusMethod { _ in throw DBusRemoteError(name: "com.example.Error.Nope", message: "no") },
                "Pipe": DBusMethod(output: "h") { _ in
                    var ends: [Int32] = [0, 0]
                    guard pipe(&ends) == 0 else { throw DBusRemoteError(name: "com.example.Error.Pipe") }
                    _ = write(ends[1], "hello", 5)
                    close(ends[1])
                    return DBusMethodReply([.unixFD(0)], descriptors: [ends[0]])
                },
            ],
            properties: [
                "Count": DBusProperty(
                    .uint32,
                    get: { .uint32(counter.value) },
                    set: { value in
                        if case .uint32(let v) = value { counter.value = v }
                    }
                ),
                "Name": .constant(.string("thing")),
            ]
        )
        server.export(DBusExportedObject(path: path, interfaces: [interface]))
        return server
    }

    @Test func helloGivesAUniqueNameAndTheBusAnswers() async throws {
        let bus = try await DBusTestBus.start()
        defer { bus.stop() }
        let connection = try await DBusConnection.connect(to: try DBusAddress(bus.address))
        defer { connection.close() }
        #expect(connection.uniqueName.hasPrefix(":"))
        #expect(connection.unixFDsEnabled)
        let names = try await connection.call(
            destination: "org.freedesktop.DBus",
            path: "/org/freedesktop/DBus",
            interface: "org.freedesktop.DBus",
            member: "ListNames"
        )
        #expect(names.message.body.first?.stringArray?.contains(connection.uniqueName) == true)
        await #expect(throws: DBusRemoteError.self) {
            _ = try await connection.call(destination: "org.nobody.Here", path: "/", interface: nil, member: "X")
        }
    }

    @Test func methodsPropertiesObjectManagerIntrospectionAndDescriptors() async throws {
        let bus = try await DBusTestBus.start()
        defer { bus.stop() }
        let counter = LockedCounter()
        let server = try await Self.server(on: bus, counter: counter)
        defer { server.close() }
        let client = try await DBusConnection.connect(to: try DBusAddress(bus.address))
        defer { client.close() }

        let echo = try await client.call(
            destination: Self.service,
            path: Self.path,
            interface: "com.example.Echo",
            member: "Echo",
            body: [.string("ü")]
        )
        #expect(echo.message.body == [.string("ü")])
        do {
            _ = try await client.call(
                destination: Self.service,
                path: Self.path,
                interface: "com.example.Echo",
                member: "Fail"
            )
            Issue.record("Fail did not fail")
        } catch let error as DBusRemoteError {
            #expect(error == DBusRemoteError(name: "com.example.Error.Nope", message: "no"))
        }
        await #expect(throws: DBusRemoteError.self) {
            _ = try await client.call(
                destination: Self.service,
                path: Self.path,
                interface: "com.example.Echo",
                member: "Echo",
                body: [.uint32(1)]
            )
        }

        let set = DBusMessage.methodCall(
            destination: Self.service,
            path: Self.path,
            interface: "org.freedesktop.DBus.Properties",
            member: "Set",
            body: [.string("com.example.Echo"), .string("Count"), .variant(.uint32(7))]
        )
        _ = try await client.call(set)
        #expect(counter.value == 7)
        let all = try await client.call(
            destination: Self.service,
            path: Self.path,
            interface: "org.freedesktop.DBus.Properties",
            member: "GetAll",
            body: [.string("com.example.Echo")]
        )
        #expect(all.message.body.first?.stringDictionary?["Count"] == .uint32(7))

        let managed = try await client.call(
            destination: Self.service,
            path: "/com/example/root",
            interface: "org.freedesktop.DBus.ObjectManager",
            member: "GetManagedObjects"
        )
        let objects = try #require(managed.message.body.first?.stringDictionary)
        #expect(objects.keys.sorted() == [Self.path.rawValue])

        let xml = try await client.call(
            destination: Self.service,
            path: "/com/example",
            interface: "org.freedesktop.DBus.Introspectable",
            member: "Introspect"
        )
        #expect(xml.message.body.first?.stringValue?.contains("<node name=\"root\"/>") == true)

        let piped = try await client.call(
            destination: Self.service,
            path: Self.path,
            interface: "com.example.Echo",
            member: "Pipe"
        )
        #expect(piped.message.body == [.unixFD(0)])
        let descriptor = try #require(piped.descriptors.take(0))
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 16)
        let count = read(descriptor, &buffer, 16)
        #expect(count == 5 && Array(buffer[0..<5]) == Array("hello".utf8))
    }

    @Test func signalsArriveThroughTheirMatchRule() async throws {
        let bus = try await DBusTestBus.start()
        defer { bus.stop() }
        let server = try await Self.server(on: bus, counter: LockedCounter())
        defer { server.close() }
        let client = try await DBusConnection.connect(to: try DBusAddress(bus.address))
        defer { client.close() }
        let signals = try await client.signals(
            matching: DBusMatchRule(sender: Self.service, interface: "org.freedesktop.DBus.Properties", path: Self.path)
        )
        for value in 1...3 {
            try server.emitPropertiesChanged(
                path: Self.path,
                interface: "com.example.Echo",
                changed: [("Count", .uint32(UInt32(value)))]
            )
        }
        var seen: [DBusValue] = []
        for await signal in signals {
            seen.append(signal.message.body[1].stringDictionary?["Count"] ?? .boolean(false))
            if seen.count == 3 { break }
        }
        #expect(seen == [.uint32(1), .uint32(2), .uint32(3)])
    }

    @Test func moreCallsThanTheBusAllowsPendingAllSucceed() async throws {
        let bus = try await DBusTestBus.start()
        defer { bus.stop() }
        let server = try await Self.server(on: bus, counter: LockedCounter())
        defer { server.close() }
        let client = try await DBusConnection.connect(to: try DBusAddress(bus.address))
        defer { client.close() }
        // 300 at once: dbus-daemon refuses a connection's 129th pending call, so the connection
        // must keep the rest waiting.
        let answers = try await withThrowingTaskGroup(of: DBusValue?.self) { group in
            for index in 0..<300 {
                group.addTask {
                    try await client.call(
                        destination: Self.service,
                        path: Self.path,
                        interface: "com.example.Echo",
                        member: "Echo",
                        body: [.string("\(index)")]
                    ).message.body.first
                }
            }
            var answers: Set<String> = []
            for try await answer in group { answer?.stringValue.map { _ = answers.insert($0) } }
            return answers
        }
        #expect(answers.count == 300)
    }

    @Test func theBusGoingAwayClosesTheConnectionAndFailsPendingCalls() async throws {
        let bus = try await DBusTestBus.start()
        defer { bus.stop() }
        let connection = try await DBusConnection.connect(to: try DBusAddress(bus.address))
        defer { connection.close() }
        bus.stop()
        let reason = await connection.waitUntilClosed()
        #expect(reason.code == .disconnected)
        await #expect(throws: DBusError.self) {
            _ = try await connection.call(
                destination: "org.freedesktop.DBus",
                path: "/",
                interface: nil,
                member: "Ping"
            )
        }
    }

    @Test func aPolicyDenialIsAnAccessDeniedError() async throws {
        let bus = try await DBusTestBus.start(denying: ["org.bluez"])
        defer { bus.stop() }
        // Someone owns the name (else the bus answers ServiceUnknown before it checks the policy).
        let owner = try await DBusConnection.connect(to: try DBusAddress(bus.address))
        defer { owner.close() }
        _ = try await owner.call(
            destination: "org.freedesktop.DBus",
            path: "/org/freedesktop/DBus",
            interface: "org.freedesktop.DBus",
            member: "RequestName",
            body: [.string("org.bluez"), .uint32(4)]
        )
        let connection = try await DBusConnection.connect(to: try DBusAddress(bus.address))
        defer { connection.close() }
        do {
            _ = try await connection.call(destination: "org.bluez", path: "/", interface: nil, member: "Ping")
            Issue.record("the call was not refused")
        } catch let error as DBusRemoteError {
            #expect(error.name == "org.freedesktop.DBus.Error.AccessDenied")
        }
    }

    @Test(.requiring(Peers.isCI || DBusConnectionTests.hasDBusPython, "needs Debian's python3-dbus"))
    func dbusPythonCallsOurObjectAndGetsADescriptor() async throws {
        let bus = try await DBusTestBus.start()
        defer { bus.stop() }
        let server = try await Self.server(on: bus, counter: LockedCounter())
        defer { server.close() }
        let script = """
            import dbus, os, sys
            bus = dbus.bus.BusConnection(sys.argv[1])
            obj = bus.get_object("\(Self.service)", "\(Self.path)")
            echo = obj.Echo("grüße", dbus_interface="com.example.Echo")
            fd = obj.Pipe(dbus_interface="com.example.Echo").take()
            props = obj.GetAll("com.example.Echo", dbus_interface="org.freedesktop.DBus.Properties")
            print(echo, os.read(fd, 16).decode(), props["Name"], sep="|")
            """
        let result = try await Peers.runProcess(
            "/usr/bin/python3",
            ["-c", script, bus.address],
            stdin: nil,
            timeout: .seconds(120)
        )
        #expect(result.status == 0, "\(String(decoding: result.stderr, as: UTF8.self))")
        #expect(String(decoding: result.stdout, as: UTF8.self) == "grüße|hello|thing\n")
    }

    static let hasDBusPython: Bool = {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", "import dbus"]
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        Peers.waitForExit(process)
        return process.terminationStatus == 0
    }()
}

/// A counter behind a lock (a property's storage).
final class LockedCounter: Sendable {
    private let stored = Locked<UInt32>(0)
    var value: UInt32 {
        get { stored.withLock { $0 } }
        set { stored.withLock { $0 = newValue } }
    }
}

/// The connection against a bus that closes it at a chosen moment: a socket of the test's own
/// that speaks just enough of the handshake, so the moment does not depend on a daemon's clock.
struct DBusConnectionClosedEarlyTests {
    /// What the fake bus does after the client's `BEGIN`.
    enum Moment: Sendable, CustomStringConvertible {
        case atAuth, afterBegin
        var description: String { self == .atAuth ? "during authentication" : "before Hello" }
    }

    /// Listens on a fresh Unix socket, accepts one client, answers `AUTH` and
    /// `NEGOTIATE_UNIX_FD` as a bus does (unless `moment` is `.atAuth`), and closes.
    static func fakeBus(closing moment: Moment) throws -> (address: String, done: Task<Void, Never>) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("fake-bus-\(UUID().uuidString)").path
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        try #require(listener >= 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        try #require(bound == 0 && listen(listener, 1) == 0)
        // On a thread of its own: `accept` and `read` block. On the cooperative pool (two threads
        // here) this task once started only after the client's handshake had timed out and
        // closed, at the loaded start of a run.
        let (ended, end) = AsyncStream<Void>.makeStream()
        Thread {
            serve(listener: listener, path: path, moment: moment)
            end.finish()
        }.start()
        let done = Task { for await _ in ended {} }
        return ("unix:path=\(path)", done)
    }

    private static func serve(listener: Int32, path: String, moment: Moment) {
        let client = accept(listener, nil, nil)
        close(listener)
        unlink(path)
        guard client >= 0 else { return }
        defer { close(client) }
        // `send` without SIGPIPE: a client that already left must be an error here, not a signal
        // that ends the test process (that happened: the client had timed out, and SIGPIPE was
        // not yet ignored that early in the run).
        func answer(_ line: String) { _ = send(client, line, line.utf8.count, Int32(MSG_NOSIGNAL)) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 512)
        while moment == .afterBegin, !String(decoding: received, as: UTF8.self).contains("BEGIN\r\n") {
            let count = read(client, &buffer, buffer.count)
            guard count > 0 else { return }
            received += buffer[0..<count]
            let text = String(decoding: buffer[0..<count], as: UTF8.self)
            if text.contains("AUTH EXTERNAL") { answer("OK 0123456789abcdef0123456789abcdef\r\n") }
            if text.contains("NEGOTIATE_UNIX_FD") { answer("AGREE_UNIX_FD\r\n") }
        }
    }

    @Test(arguments: [Moment.atAuth, .afterBegin])
    func aBusThatClosesEarlySaysWhen(_ moment: Moment) async throws {
        let (address, done) = try Self.fakeBus(closing: moment)
        // The outcome is the bus's close, an event; the timeout is only a guard against a hang,
        // long enough that a loaded machine cannot reach it.
        let error = await #expect(throws: DBusError.self) {
            _ = try await DBusConnection.connect(to: try DBusAddress(address), timeout: .seconds(300))
        }
        await done.value
        switch moment {
        case .atAuth:
            #expect(error?.code == .authenticationFailed)
            #expect(error?.message.contains("during authentication") == true, "\(String(describing: error))")
        case .afterBegin:
            #expect(error?.code == .connectionFailed)
            #expect(error?.message.contains("before answering Hello") == true, "\(String(describing: error))")
        }
        #expect(error?.message.contains("auth_timeout") == true)
    }
}
