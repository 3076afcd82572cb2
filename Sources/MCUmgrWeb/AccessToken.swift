import Foundation

/// The secret every request must carry: the page can reflash devices, so knowing the port is
/// not enough. Random, 32 bytes as hex; compared in constant time.
public struct AccessToken: Sendable, Hashable {
    /// The token as it appears in the URL and the cookie.
    public let value: String

    /// A new random token.
    public init() {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        value = bytes.map { String(format: "%02x", $0) }.joined()
    }

    /// A given token (tests, a token the caller keeps).
    /// - Parameter value: at least 16 characters.
    /// - Throws: ``WebConfigurationError`` for a shorter one, which could be guessed.
    public init(_ value: String) throws(WebConfigurationError) {
        guard value.utf8.count >= 16 else {
            throw WebConfigurationError("the access token must be at least 16 characters long")
        }
        self.value = value
    }

    /// Whether `candidate` is this token, in time that depends only on the lengths: no early
    /// exit at the first differing byte, which would let a caller find the token byte by byte.
    /// - Parameter candidate: what the request carried.
    func matches(_ candidate: some StringProtocol) -> Bool {
        let expected = Array(value.utf8)
        let given = Array(candidate.utf8)
        var difference = UInt8(expected.count == given.count ? 0 : 1)
        for index in expected.indices {
            difference |= expected[index] ^ (index < given.count ? given[index] : 0)
        }
        return difference == 0
    }
}
