import Foundation
import HTTPTypes
import Hummingbird
import MCUboot
import MCUmgrDFU
import NIOCore
import SMPCore
import SMPLink

/// The page's JSON API: devices, images, upgrades and their live events, files, the shell,
/// statistics, settings, raw requests, a fleet's rollout and simulated devices. Every failure is one
/// line in `{"error": …}` — the command line's line where the command line has one.
struct API: Sendable {
    let registry: DeviceRegistry
    let firmware: FirmwareStore
    /// The server's one rollout at a time.
    let fleet: FleetSlot
    /// The simulated devices started from the page.
    let simulators: SimulatorBench
    let environment: WebEnvironment
    let uploadLimit: Int

    func register(on router: Router<BasicRequestContext>) {
        registerDevices(on: router)
        registerBluetooth(on: router)
        registerImages(on: router)
        registerUpgrade(on: router)
        registerFiles(on: router)
        registerShell(on: router)
        registerStats(on: router)
        registerLogs(on: router)
        registerSettings(on: router)
        registerRaw(on: router)
        registerFleet(on: router)
        registerSimulator(on: router)
    }

    /// Runs a handler, turning every error into a ``WebError``: refusals by what they are, the
    /// rest as the command line says them.
    func answer(_ body: () async throws -> Response) async throws -> Response {
        do {
            return try await body()
        } catch let error as WebError {
            throw error
        } catch let refusal as ImageStateGuard.Refusal {
            throw WebError(refusal.kind == .badInput ? .badRequest : .conflict, refusal.description)
        } catch let error as SMPDeviceError {
            throw WebError(.conflict, environment.describe(error))
        } catch let error as DecodingError {
            throw WebError(.badRequest, "the request is not the JSON this call takes: \(Self.describe(error))")
        } catch {
            // The device or the link failed: the gateway's failure, not the page's.
            throw WebError(.badGateway, environment.describe(error))
        }
    }

    /// JSON with status 200.
    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        var headers = HTTPFields()
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(
            status: status,
            headers: headers,
            body: .init(byteBuffer: ByteBuffer(bytes: try encoder.encode(value)))
        )
    }

    /// A JSON body, up to 64 KiB (only uploads are larger).
    static func body<T: Decodable>(_ type: T.Type, from request: Request) async throws -> T {
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: 64 << 10)
        } catch {
            throw WebError(.contentTooLarge, "the request body is larger than the 64 KiB limit")
        }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try decoder.decode(T.self, from: Data(buffer.readableBytesView))
    }

    /// A decoding error in one line.
    static func describe(_ error: DecodingError) -> String {
        switch error {
        case .keyNotFound(let key, _): "'\(key.stringValue)' is missing"
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            context.codingPath.isEmpty
                ? context.debugDescription
                : "'\(context.codingPath.map(\.stringValue).joined(separator: "."))': \(context.debugDescription)"
        @unknown default: "\(error)"
        }
    }

    /// A limit in the unit people read it in, e.g. `64 MiB`.
    static func size(_ bytes: Int) -> String {
        if bytes >= 1 << 20 && bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
        if bytes >= 1 << 10 && bytes % (1 << 10) == 0 { return "\(bytes >> 10) KiB" }
        return "\(bytes) bytes"
    }
}
