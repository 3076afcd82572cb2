import Foundation
import SMPBytes
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// `atexit` is the only hook after Swift Testing's own last line.
/// Tests skipped because something they need is missing, counted as they are skipped and summed
/// up in the run's last lines, when the test process exits: Swift Testing prints each skip where
/// it happens, hundreds of lines up, and a run that skipped whole suites otherwise ends looking
/// like one that tested everything.
public enum SkippedTests {
    // Reasons and how many suites or tests each skipped; the exit hook is installed once.
    private static let state = Locked<(counts: [String: Int], hooked: Bool)>(([:], false))

    /// Counts a skip when `condition` is false.
    /// - Parameters:
    ///   - condition: whether the test can run.
    ///   - reason: what is missing and how to get it.
    /// - Returns: `condition`.
    public static func unless(_ condition: Bool, _ reason: String) -> Bool {
        guard !condition else { return true }
        let hook = state.withLock { state in
            state.counts[reason, default: 0] += 1
            defer { state.hooked = true }
            return !state.hooked
        }
        if hook { atexit { SkippedTests.printSummary() } }
        return false
    }

    /// The summary lines, most frequent reason first; empty when nothing was skipped.
    public static var summary: [String] {
        let counts = state.withLock { $0 }.counts
        guard !counts.isEmpty else { return [] }
        let total = counts.values.reduce(0, +)
        return [
            "\(total) suite\(total == 1 ? "" : "s") or test\(total == 1 ? "" : "s") skipped: this run did not test everything"
        ]
            + counts.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map { "  \($0.value) × \($0.key)" }
    }

    private static func printSummary() {
        let text = summary.map { $0 + "\n" }.joined()
        FileHandle.standardError.write(Data(text.utf8))
    }
}

extension Trait where Self == ConditionTrait {
    /// Runs the suite or test only when `condition` holds; otherwise skips it with `reason`,
    /// counted in ``SkippedTests/summary``. The condition is evaluated when the suite or test
    /// would run, so a filtered run counts only what it selected.
    /// - Parameters:
    ///   - condition: whether what is needed is there.
    ///   - reason: what is missing and how to get it.
    /// - Returns: the condition trait.
    public static func requiring(_ condition: @autoclosure @escaping @Sendable () -> Bool, _ reason: String) -> Self {
        .enabled(if: SkippedTests.unless(condition(), reason), Comment(rawValue: reason))
    }
}
