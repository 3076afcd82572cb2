import Foundation
import HTTPTypes
import MCUboot
import SMPSimulator
import Testing

@testable import MCUmgrWeb

@Suite struct FirmwareStoreTests {
    @Test func keepsTheLatestFilesOnly() async throws {
        let bytes = FactoryImage.make(version: ImageVersion(major: 2, minor: 0, revision: 0))
        let package = try FirmwarePackage(data: Data(bytes), fileName: "app.bin")
        let store = FirmwareStore()
        var ids: [String] = []
        for index in 0..<5 { ids.append(await store.add(.init(name: "app\(index).bin", package: package))) }
        #expect(try await store.entry(ids[4]).name == "app4.bin")
        do {
            _ = try await store.entry(ids[0])
            Issue.record("the oldest file was kept")
        } catch let error as WebError {
            #expect(error.status == .notFound)
            #expect(error.description.contains("choose the file again"))
        }
    }
}
