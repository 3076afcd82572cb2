import HTTPTypes
import Testing

@testable import MCUmgrWeb

@Suite struct AccessTokenTests {
    @Test func newTokensAreLongAndDifferent() {
        let first = AccessToken()
        let second = AccessToken()
        #expect(first.value.count == 64)
        #expect(first != second)
    }

    @Test func matchesOnlyTheWholeToken() throws {
        let token = try AccessToken("0123456789abcdef0123")
        #expect(token.matches("0123456789abcdef0123"))
        #expect(!token.matches("0123456789abcdef012"))
        #expect(!token.matches("0123456789abcdef01234"))
        #expect(!token.matches("1123456789abcdef0123"))
        #expect(!token.matches(""))
    }

    @Test func refusesAShortToken() {
        #expect(throws: WebConfigurationError.self) { try AccessToken("short") }
    }
}
