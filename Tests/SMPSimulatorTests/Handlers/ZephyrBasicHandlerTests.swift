import Foundation
import SMPCore
import Testing

@testable import SMPSimulator

@Suite("ZephyrBasicHandler")
struct ZephyrBasicHandlerTests {
    @Test("erasing storage removes saved settings (they are gone after the next reset)")
    func eraseStorage() async throws {
        var client = try await TestClient()
        _ = try await client.send(SettingsManagement.Write(name: "x", value: Data([1])))
        _ = try await client.send(SettingsManagement.Save())
        _ = try await client.send(ZephyrBasicManagement.EraseStorage())
        _ = try await client.send(OSManagement.Reset())
        await client.device.waitUntilAnswering()
        let error = await deviceError { _ = try await client.send(SettingsManagement.Read(name: "x")) }
        #expect(error?.matches(SettingsManagement.ReturnCode.keyNotFound) == true)
    }
}
