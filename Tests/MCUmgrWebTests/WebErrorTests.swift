import Foundation
import HTTPTypes
import Hummingbird
import Testing

@testable import MCUmgrWeb

@Suite struct WebErrorTests {
    @Test func isOneJSONLineWithItsStatus() throws {
        let error = WebError(.conflict, #"a "quoted" line"#)
        let object = try JSONSerialization.jsonObject(with: error.json) as? [String: String]
        #expect(object == ["error": #"a "quoted" line"#])
        let response = error.response()
        #expect(response.status == .conflict)
        #expect(response.headers[.contentType] == "application/json; charset=utf-8")
    }
}
