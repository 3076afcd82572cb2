import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import MCUboot
import MCUmgr
import MCUmgrConnect
import MCUmgrWeb
import NIOCore
import SMPLink
import SMPSimulator
import Testing

/// A server over one in-process simulated device (every `sim://` URL reaches it), with a
/// known token, and requests as the page sends them.
struct WebHarness {
    static let address = ListenAddress(host: "127.0.0.1", port: 8080)
    static let host = "127.0.0.1:8080"
    static let origin = "http://127.0.0.1:8080"

    let token: AccessToken
    let device: SimulatedDevice
    let server: WebServer

    /// - Parameters:
    ///   - device: the simulated device's configuration.
    ///   - uploadLimit: the largest firmware file.
    ///   - profiles: the saved profiles the page lists.
    ///   - loadRecent: the recent URLs of an earlier run.
    ///   - saveRecent: where the server keeps them.
    ///   - connect: how URLs reach devices (default: every `sim://` URL reaches `device`).
    ///   - scanBluetooth: the Bluetooth scan (default: none, as where BlueZ is not).
    ///   - rolloutState: where rollouts are kept (default: a temporary folder of the server's).
    init(
        device configuration: SimulatedDevice.Configuration = .init(),
        uploadLimit: Int = 64 << 20,
        profiles: @escaping @Sendable () throws -> [(name: String, url: String)] = { [] },
        loadRecent: @escaping @Sendable () -> [String] = { [] },
        saveRecent: @escaping @Sendable ([String]) -> Void = { _ in },
        connect: (@Sendable (ConnectionURL) throws -> any SMPTransport)? = nil,
        scanBluetooth: (@Sendable (String?, Duration) async throws -> [WebEnvironment.BluetoothDevice])? = nil,
        rolloutState: WebEnvironment.RolloutState? = nil
    ) throws {
        token = try AccessToken("0123456789abcdef0123456789abcdef")
        let device = SimulatedDevice(configuration: configuration)
        self.device = device
        server = try WebServer(
            configuration: .init(address: Self.address, token: token, uploadLimit: uploadLimit),
            environment: WebEnvironment(
                connect: connect ?? { url in
                    if case .simulator = url { return LoopbackTransport(device: device) }
                    return try url.makeTransport()
                },
                profiles: profiles,
                loadRecent: loadRecent,
                saveRecent: saveRecent,
                clientConfiguration: .init(timeout: .seconds(10)),
                scanBluetooth: scanBluetooth,
                rolloutState: rolloutState
            )
        )
    }

    /// Runs `body` against the router.
    func test<T: Sendable>(_ body: @Sendable (any TestClientProtocol) async throws -> T) async throws -> T {
        try await server.makeApplication().test(.router, body)
    }

    /// The headers of a request from the page: our host, the cookie, and our origin.
    func headers(
        cookie: Bool = true,
        host: String? = WebHarness.host,
        origin: String? = WebHarness.origin,
        json: Bool = false
    ) -> HTTPFields {
        var headers = HTTPFields()
        if let host { headers[HTTPField.Name("Host")!] = host }
        if cookie { headers[.cookie] = "mcumgr_ui_token=\(token.value)" }
        if let origin { headers[.origin] = origin }
        if json { headers[.contentType] = "application/json" }
        return headers
    }
}

extension TestResponse {
    /// The body as text.
    var text: String { String(buffer: body) }

    /// The body as a JSON object.
    func object() throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any])
    }

    /// The `error` line of a failure.
    var errorLine: String? { (try? object())?["error"] as? String }
}

extension TestClientProtocol {
    /// A GET from the page.
    func get(_ path: String, _ harness: WebHarness) async throws -> TestResponse {
        try await execute(uri: path, method: .get, headers: harness.headers())
    }

    /// A POST of JSON from the page.
    func post(_ path: String, _ json: String, _ harness: WebHarness) async throws -> TestResponse {
        try await execute(
            uri: path,
            method: .post,
            headers: harness.headers(json: true),
            body: ByteBuffer(string: json)
        )
    }

    /// Adds the simulated device; returns its id.
    func addDevice(_ harness: WebHarness, url: String = "sim://") async throws -> String {
        let response = try await post("/api/devices", #"{"url": "\#(url)"}"#, harness)
        #expect(response.status == .ok, "\(response.text)")
        return try #require(try response.object()["id"] as? String)
    }

    /// Sends a firmware file; returns its id and the answer.
    func sendFirmware(_ bytes: [UInt8], name: String, _ harness: WebHarness) async throws -> TestResponse {
        try await execute(
            uri: "/api/firmware?name=\(name)",
            method: .post,
            headers: harness.headers(),
            body: ByteBuffer(bytes: bytes)
        )
    }

    /// Sends a file's bytes to a device path (the Files screen's Upload).
    func upload(
        _ bytes: [UInt8],
        to path: String,
        device id: String,
        name: String = "local.bin",
        _ harness: WebHarness
    ) async throws -> TestResponse {
        let query = path.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? path
        return try await execute(
            uri: "/api/devices/\(id)/files/upload?path=\(query)&name=\(name)",
            method: .post,
            headers: harness.headers(),
            body: ByteBuffer(bytes: bytes)
        )
    }

    /// Follows the device's operation over its live events until it ends (the stream ends with
    /// the operation, so this is bound by events, not by a clock); returns every snapshot.
    func snapshots(_ id: String, _ harness: WebHarness) async throws -> [[String: Any]] {
        let stream = try await get("/api/devices/\(id)/operation/events", harness)
        #expect(stream.headers[.contentType] == "text/event-stream")
        return try stream.text.split(separator: "\n").filter { $0.hasPrefix("data: ") }.map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.dropFirst(6).utf8)) as? [String: Any])
        }
    }

    /// Polls the device's operation until `until` holds; bounded by a generous deadline, the
    /// poll interval only spaces the requests.
    func waitForOperation(
        _ id: String,
        _ harness: WebHarness,
        until: ([String: Any]) -> Bool
    ) async throws -> [String: Any] {
        let deadline = ContinuousClock.now + .seconds(120)
        while ContinuousClock.now < deadline {
            let response = try await get("/api/devices/\(id)/operation", harness)
            if let operation = try response.object()["operation"] as? [String: Any], until(operation) {
                return operation
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("the operation never reached the expected state")
        return [:]
    }
}

/// Images built by the simulator's own builder (a valid MCUboot image with its SHA-256 TLV).
enum WebTestImage {
    static func bytes(version: String = "2.0.0", payloadSize: Int = 4096) -> [UInt8] {
        FactoryImage.make(
            version: ImageVersion(version) ?? ImageVersion(major: 9, minor: 9, revision: 9),
            payloadSize: payloadSize
        )
    }
}

/// Simulated devices behind `sim://?seed=N` URLs, one device per URL (the harness's default sends
/// every `sim://` to one device), some refusing every upload as a device whose flash area cannot
/// be opened does.
struct SimulatedRack: Sendable {
    /// The devices by seed.
    let devices: [String: SimulatedDevice]
    /// The inventory: `sim://?seed=N dev-NN`, one line each.
    let inventory: String

    /// - Parameters:
    ///   - count: the devices.
    ///   - refusing: the 1-based numbers of the devices that refuse uploads.
    init(count: Int, refusing: Set<Int> = []) async {
        var devices: [String: SimulatedDevice] = [:]
        var lines: [String] = []
        for number in 1...count {
            let device = SimulatedDevice(configuration: .init())
            if refusing.contains(number) { await device.inject(.refuseUploads(returnCode: 10)) }
            devices["\(number)"] = device
            lines.append("sim://?seed=\(number) " + Self.name(number))
        }
        self.devices = devices
        inventory = lines.joined(separator: "\n")
    }

    /// The inventory's name of a device.
    static func name(_ number: Int) -> String { number < 10 ? "dev-0\(number)" : "dev-\(number)" }

    /// The transport to a device of the rack.
    func connect(_ url: ConnectionURL) throws -> any SMPTransport {
        guard case .simulator(let options) = url, let seed = options["seed"], let device = devices[seed] else {
            throw ConnectionURLError("\(url) is not a device of this rack")
        }
        return LoopbackTransport(device: device)
    }
}
