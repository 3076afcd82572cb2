import HTTPTypes
import SMPSimulator
import Testing

@testable import MCUmgrWeb

@Suite struct DeviceRegistryTests {
    static func registry() -> DeviceRegistry {
        let device = SimulatedDevice()
        return DeviceRegistry(environment: .init(connect: { _ in LoopbackTransport(device: device) }))
    }

    @Test func oneSessionPerURL() async throws {
        let registry = Self.registry()
        let first = try await registry.open("sim://")
        let again = try await registry.open("  sim://  ")
        #expect(first === again)
        let other = try await registry.open("sim://?images=2")
        #expect(other !== first)
        #expect(try await registry.session(first.id) === first)
    }

    @Test func aMalformedURLAndAnUnknownIdAreRefused() async {
        let registry = Self.registry()
        await #expect(throws: WebError.self) { _ = try await registry.open("ftp://x") }
        do {
            _ = try await registry.session("d42")
            Issue.record("an unknown id was found")
        } catch let error as WebError {
            #expect(error.status == .notFound)
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test func recentIsMostRecentFirstAndBounded() async throws {
        let registry = Self.registry()
        for port in 1...12 { _ = try await registry.open("udp://192.0.2.1:\(port)") }
        _ = try await registry.open("udp://192.0.2.1:5")
        let recent = await registry.recent
        #expect(recent.count == 10)
        #expect(recent.first == "udp://192.0.2.1:5")
        #expect(recent.filter { $0 == "udp://192.0.2.1:5" }.count == 1)
    }
}
