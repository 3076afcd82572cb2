import SMPBytes
import Testing

struct CodedErrorTests {
    /// A layer's error in miniature: a code, a message, a cause, and the description the layer
    /// declares from the shared one.
    struct LayerError: CodedError {
        struct Code: Sendable, Hashable, CustomStringConvertible {
            var description: String
        }
        var code: Code
        var message: String
        var cause: (any Error & Sendable)?
        var description: String { codedDescription(prefix: "Layer: ") }
    }

    /// One without a cause, as a transfer error is.
    struct CauselessError: CodedError {
        var code: LayerError.Code
        var message: String
        var description: String { codedDescription() }
    }

    static let stalled = LayerError.Code(description: "stalled")
    static let lost = LayerError.Code(description: "lost")

    @Test(
        arguments: [
            ("", nil, "Layer: stalled"),
            ("at offset 4", nil, "Layer: stalled: at offset 4"),
            ("", "EIO", "Layer: stalled (Layer: EIO)"),
            ("at offset 4", "EIO", "Layer: stalled: at offset 4 (Layer: EIO)"),
        ] as [(String, String?, String)]
    )
    func descriptionLeavesOutWhatIsEmpty(message: String, cause: String?, expected: String) {
        let error = LayerError(
            code: Self.stalled,
            message: message,
            cause: cause.map { LayerError(code: .init(description: $0), message: "") }
        )
        #expect(error.description == expected)
    }

    @Test func withoutACauseOrPrefixTheDescriptionIsCodeAndMessage() {
        #expect(CauselessError(code: Self.stalled, message: "after 3 tries").description == "stalled: after 3 tries")
        #expect(CauselessError(code: Self.stalled, message: "").cause == nil)
    }

    @Test func equalityAndHashingLookAtTheCodeAlone() {
        let one = LayerError(code: Self.stalled, message: "one", cause: nil)
        let other = LayerError(
            code: Self.stalled,
            message: "other",
            cause: CauselessError(code: Self.lost, message: "")
        )
        #expect(one == other)
        #expect(one.hashValue == other.hashValue)
        #expect(one != LayerError(code: Self.lost, message: "one", cause: nil))
        #expect(Set([one, other]).count == 1)
    }
}
