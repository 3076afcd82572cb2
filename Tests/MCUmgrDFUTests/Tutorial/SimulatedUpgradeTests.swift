import Foundation
import MCUmgrDFU
import SMPCore
import SMPSimulator
import SMPTestSupport
import Testing

/// The DocC tutorial "Your first upgrade on the simulated device" (MCUmgrDFU's documentation
/// catalog), run as written: `SimulatedUpgrade.swift` beside this file is a link to the
/// tutorial's last code step, so the program the tutorial shows is the one compiled here.
@Suite struct SimulatedUpgradeTests {
    static let catalog = Peers.packageRoot.appendingPathComponent("Sources/MCUmgrDFU/Documentation.docc")
    static let example = Peers.packageRoot.appendingPathComponent("Examples/hello-1.1.0.bin")
    static let exampleHash = "4dc1dea590247be2334ec8a596233026e228c68cab551c8c909d26696e035e0c"

    /// The tutorial's `main.swift` after "Upgrade the device": the device then runs 1.1.0,
    /// confirmed, with the factory image in slot 1 — read from the device, not from the engine.
    @Test func theTutorialUpgradesTheSimulatedDevice() async throws {
        let program = try SimulatedUpgrade()
        try await program.printSlots()
        let summary = try await program.upgrade(to: Self.example)
        try await program.printSlots()

        try await Self.expectUpgraded(program.device)
        #expect(summary.after.contains { $0.version == "1.1.0" && $0.isActive && $0.isConfirmed })
        #expect(await program.device.timesHandled(OSManagement.Reset.self) == 1)
    }

    /// The last section: with every fifth answer lost the same program still ends in the same
    /// state.
    @Test func theTutorialUpgradeSurvivesLostAnswers() async throws {
        let program = try SimulatedUpgrade()
        try await program.printSlots()
        await program.loseAnswers()
        _ = try await program.upgrade(to: Self.example)
        try await program.printSlots()

        #expect(await program.device.faults == Faults([.dropResponses(every: 5)]))
        try await Self.expectUpgraded(program.device)
    }

    static func expectUpgraded(_ device: SimulatedDevice) async throws {
        let states = await device.imageStates
        let running = try #require(states.first { $0.isActive })
        #expect(running.version == "1.1.0")
        #expect(running.isConfirmed)
        #expect(running.hash.map { TestBytes.hex($0) } == exampleHash)
        #expect(states.contains { $0.slot == 1 && $0.version == "1.0.0" && !$0.isActive })
    }

    /// The code files the tutorial shows, in the order it shows them, by displayed name.
    static func steps() throws -> [String: [String]] {
        let tutorial = try String(
            contentsOf: catalog.appendingPathComponent("Tutorials/FirstUpgrade.tutorial"),
            encoding: .utf8
        )
        let pattern = try Regex(#"@Code\(name: "([^"]+)", file: "([^"]+)"\)"#)
        var steps: [String: [String]] = [:]
        for match in tutorial.matches(of: pattern) {
            guard let name = match.output[1].substring, let file = match.output[2].substring else { continue }
            steps[String(name), default: []].append(String(file))
        }
        return steps
    }

    static func lines(of file: String) throws -> [String] {
        try String(contentsOf: catalog.appendingPathComponent("Resources/\(file)"), encoding: .utf8)
            .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    /// Each step of a file the tutorial shows only adds lines to the step before it, so every
    /// line a reader types is in the last step — which, for `SimulatedUpgrade.swift`, is the
    /// program compiled and run above.
    @Test func everyStepOnlyAddsLinesToTheStepBefore() throws {
        let steps = try Self.steps()
        #expect(
            Set(steps.keys) == ["Terminal", "Package.swift", "SimulatedUpgrade.swift", "main.swift"],
            "\(steps.keys.sorted())"
        )
        for (name, files) in steps where name != "Terminal" {
            for (earlier, later) in zip(files, files.dropFirst()) {
                let missing = Self.linesMissing(from: try Self.lines(of: later), keeping: try Self.lines(of: earlier))
                #expect(missing.isEmpty, "\(name): \(later) drops or changes lines of \(earlier): \(missing)")
            }
        }
        let compiled = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("SimulatedUpgrade.swift")
        let lastStep = try #require(steps["SimulatedUpgrade.swift"]?.last)
        #expect(
            try String(contentsOf: compiled, encoding: .utf8)
                == String(contentsOf: Self.catalog.appendingPathComponent("Resources/\(lastStep)"), encoding: .utf8)
        )
    }

    /// The lines of `earlier` that are not, in order, lines of `later` (empty when `earlier` is a
    /// subsequence of `later`).
    static func linesMissing(from later: [String], keeping earlier: [String]) -> [String] {
        var remaining = later[...]
        var missing: [String] = []
        for line in earlier {
            if let index = remaining.firstIndex(of: line) {
                remaining = remaining[(index + 1)...]
            } else {
                missing.append(line)
            }
        }
        return missing
    }

    /// The subsequence check itself: a changed or reordered line is caught, an added one is not.
    @Test(arguments: [
        (["a", "b", "c"], ["a", "x", "b", "c", "y"], [String]()),
        (["a", "b", "c"], ["a", "c"], ["b"]),
        (["a", "b"], ["b", "a"], ["b"]),
        (["a", "b"], ["a", "B"], ["b"]),
    ])
    func theStepCheckFindsDroppedLines(earlier: [String], later: [String], missing: [String]) {
        #expect(Self.linesMissing(from: later, keeping: earlier) == missing)
    }
}
