import Testing

extension Peers {
    /// The trait of a test that needs peer tools: enabled when every one is available, and when
    /// not, skipped with the reason — which peers are missing and how to install them. In CI
    /// ``available(_:)`` answers `true`, so the test runs and a missing peer fails it.
    /// - Parameter names: Python modules or executables, as for ``available(_:)``.
    /// - Returns: the condition trait.
    public static func needed(_ names: String...) -> ConditionTrait {
        let missing = names.filter { !available($0) }
        return .requiring(
            missing.isEmpty,
            "needs the peer tool\(missing.count == 1 ? "" : "s") \(missing.joined(separator: ", ")): "
                + "run scripts/setup-peers.sh (in CI a missing peer fails instead)"
        )
    }
}
