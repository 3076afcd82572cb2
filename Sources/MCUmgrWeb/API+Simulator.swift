import Foundation
import Hummingbird
import MCUmgrConnect
import SMPCore
import SMPSimulator

/// Simulated device: start devices from the page, see their flash and what MCUboot does at the
/// next reset, inject faults, press the recovery button — demos, training and tests without
/// hardware. The devices are `mcumgr simulator`'s, served over UDP on loopback.
extension API {
    /// The Simulator form.
    struct StartSimulated: Codable, Sendable {
        var count: Int?
        /// Options as a `sim://` query takes them, e.g. `mode=swap-using-move&images=2`.
        var options: String?
        /// The share of faulty devices: `0.1` or `10%` (empty: none).
        var faultShare: String?
        /// One kind (`dead`, `refusing`, `power-loss`, `slow`), or every kind in turn.
        var faultKind: String?
        var seed: UInt64?
    }

    /// A device's row: who it is and how it runs.
    struct SimulatedRow: Encodable, Sendable {
        var name: String
        var url: String
        var fault: String?
        var stage: String
        var boots: Int
        var requests: Int
        var faults: [String]
    }

    /// A device in full: its row, its flash and its next boot.
    struct SimulatedDetail: Encodable, Sendable {
        var device: SimulatedRow
        var mode: String
        var slots: [Slot]
        var nextBoot: [String]
        var nextStage: String
        var nextRunning: [String]
        var uploadsStarted: Int
        var resets: Int
    }

    struct SimulatorState: Encodable, Sendable {
        var devices: [SimulatedRow]
        var inventory: String
        var limit: Int
    }

    struct SimulatedAction: Codable, Sendable { var action: String }

    func registerSimulator(on router: Router<BasicRequestContext>) {
        router.get("/api/simulator") { _, _ in
            try await answer { try Self.json(await simulatorState()) }
        }
        router.post("/api/simulator") { request, _ in
            try await answer {
                let body = try await Self.body(StartSimulated.self, from: request)
                _ = try await simulators.start(try Self.simulatorRequest(body))
                return try Self.json(await simulatorState())
            }
        }
        router.post("/api/simulator/stop") { _, _ in
            try await answer {
                await simulators.stopAll()
                return try Self.json(await simulatorState())
            }
        }
        router.get("/api/simulator/:name") { _, context in
            try await answer {
                let member = try await simulators.member(context.parameters.require("name"))
                return try Self.json(await Self.detail(member))
            }
        }
        router.post("/api/simulator/:name") { request, context in
            try await answer {
                let member = try await simulators.member(context.parameters.require("name"))
                let body = try await Self.body(SimulatedAction.self, from: request)
                try await Self.perform(body.action, on: member.device)
                return try Self.json(await Self.detail(member))
            }
        }
    }

    private func simulatorState() async -> SimulatorState {
        var rows: [SimulatedRow] = []
        for member in await simulators.members { rows.append(await Self.row(member)) }
        return SimulatorState(devices: rows, inventory: await simulators.inventory, limit: SimulatorBench.deviceLimit)
    }

    static func row(_ member: SimulatorBench.Member) async -> SimulatedRow {
        let device = member.device
        return SimulatedRow(
            name: member.name,
            url: member.url,
            fault: member.fault?.rawValue,
            stage: await device.stage.rawValue,
            boots: await device.bootCount,
            requests: await device.counters.requests,
            faults: await device.faults.faults.map(\.description)
                + (member.fault == .dead ? ["dead: its port reads nothing"] : [])
        )
    }

    static func detail(_ member: SimulatorBench.Member) async -> SimulatedDetail {
        let device = member.device
        let next = await device.nextBoot
        let counters = await device.counters
        return SimulatedDetail(
            device: await row(member),
            mode: await device.bootloader.mode.rawValue,
            slots: await device.imageStates.map(slot),
            nextBoot: next.log,
            nextStage: next.stage.rawValue,
            nextRunning: next.running.map { "image \($0.imageNumber): \($0.version) from slot \($0.slot)" },
            uploadsStarted: counters.uploadsStarted,
            resets: counters.resets
        )
    }
}

extension API {
    /// The faults and buttons the page offers, by the name the page sends (its buttons say them
    /// in words).
    static let simulatedActions = [
        "power-cycle", "recovery-button", "power-loss-next-request", "power-loss-swap", "busy", "lose-next-answer",
        "lose-answers", "silence", "clear-faults",
    ]

    /// Carries out one of ``simulatedActions``.
    /// - Throws: `WebError` 400 for another name.
    static func perform(_ action: String, on device: SimulatedDevice) async throws(WebError) {
        switch action {
        case "power-cycle": await device.reset()
        case "recovery-button": await device.reset(holdingRecoveryButton: true)
        case "power-loss-next-request": await device.inject(.powerLoss(.atRequest(1)))
        case "power-loss-swap": await device.inject(.powerLoss(.duringSwap))
        case "busy": await device.inject(.busy(count: 5))
        case "lose-next-answer": await device.inject(.loseAnswer(toRequest: 1))
        case "lose-answers": await device.inject(.dropResponses(every: 3))
        case "silence": await device.inject(.silence(afterRequests: 0))
        case "clear-faults": await device.setFaults(.none)
        default:
            throw WebError(
                .badRequest,
                "action '\(action)' is not one of \(simulatedActions.joined(separator: ", "))"
            )
        }
    }

    /// The form, checked: the `sim://` options by the simulator's own parser, a state folder
    /// refused (the page's devices keep nothing on disk), the fault share as `--fault-share`
    /// takes it.
    static func simulatorRequest(_ body: StartSimulated) throws(WebError) -> SimulatorBench.Request {
        let count = body.count ?? 1
        guard (1...SimulatorBench.deviceLimit).contains(count) else {
            throw WebError(.badRequest, "Devices: \(count) is not a number from 1 to \(SimulatorBench.deviceLimit)")
        }
        let options = try simulatorOptions(body.options ?? "")
        let configuration: SimulatedDevice.Configuration
        do {
            configuration = try SimulatedDevice.Configuration(options: options)
        } catch {
            throw WebError(.badRequest, "Options: \(error)")
        }
        let kinds: [SimulatedFleet.FaultKind]
        switch body.faultKind.map({ $0.trimmingCharacters(in: .whitespaces) }) ?? "" {
        case "", "any": kinds = SimulatedFleet.FaultKind.allCases
        case let name:
            guard let kind = SimulatedFleet.FaultKind(rawValue: name) else {
                let names = SimulatedFleet.FaultKind.allCases.map(\.rawValue).joined(separator: ", ")
                throw WebError(.badRequest, "Fault: '\(name)' is not one of any, \(names)")
            }
            kinds = [kind]
        }
        return SimulatorBench.Request(
            count: count,
            configuration: configuration,
            faultShare: try faultShare(body.faultShare),
            faultKinds: kinds,
            seed: body.seed ?? 1
        )
    }

    /// `images=2&mode=swap`, read as the query of a `sim://` URL.
    static func simulatorOptions(_ text: String) throws(WebError) -> [String: String] {
        let query = text.trimmingCharacters(in: .whitespaces)
        guard !query.isEmpty else { return [:] }
        let url: ConnectionURL
        do {
            url = try ConnectionURL(parsing: "sim://?" + (query.hasPrefix("?") ? String(query.dropFirst()) : query))
        } catch {
            throw WebError(.badRequest, "Options: \(error)")
        }
        guard case .simulator(let options) = url else { throw WebError(.badRequest, "Options: not sim:// options") }
        if options["state_dir"] != nil {
            throw WebError(
                .badRequest,
                "Options: state_dir is not taken here (the page's devices keep nothing on disk); "
                    + "mcumgr simulator --state-dir keeps a device's flash"
            )
        }
        return options
    }

    /// The faulty share, as `mcumgr simulator --fault-share` takes it (empty: none).
    static func faultShare(_ text: String?) throws(WebError) -> Double {
        guard let text, !text.trimmingCharacters(in: .whitespaces).isEmpty else { return 0 }
        do {
            return try SimulatedFleet.faultShare(parsing: text)
        } catch {
            throw WebError(.badRequest, "Faulty share: \(error)")
        }
    }
}
