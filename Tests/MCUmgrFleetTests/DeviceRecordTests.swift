import MCUmgrDFU
import MCUmgrFleet
import Testing

/// A failure's typed code and state: what JSON and the stores write, what older state reads as,
/// and the one rule that says whether a device answered.
struct DeviceRecordTests {
    @Test func everyEngineCodeHasItsOwnSnakeCaseName() {
        let names = FirmwareUpgradeError.Code.allCases.map(\.name)
        #expect(Set(names).count == names.count)
        for name in names {
            #expect(name.allSatisfy { $0 == "_" || ($0.isASCII && $0.isLowercase) }, "\(name)")
        }
        #expect(AttemptFailure.Code(.notSwapped).rawValue == "not_swapped")
        #expect(AttemptFailure.Code(.suitNotInstalled).rawValue == "suit_envelope_not_installed")
    }

    /// Older state files hold the engine's words; the names read as themselves.
    @Test(arguments: [
        ("link failed", AttemptFailure.Code.linkFailed),
        ("device rejected", .deviceRejected),
        ("SUIT envelope not installed", AttemptFailure.Code(.suitNotInstalled)),
        ("link_failed", .linkFailed),
        ("skipped", .skipped),
        ("not_in_inventory", .notInInventory),
        ("transport", AttemptFailure.Code(rawValue: "transport")),
    ])
    func aStoredCodeReadsAsItsTypedCode(stored: String, code: AttemptFailure.Code) {
        #expect(AttemptFailure.Code(stored: stored) == code)
    }

    @Test func aStoredFailureWithAStateThatIsNoEngineStateReadsWithoutOne() throws {
        let skipped = try #require(AttemptFailure(storedCode: "skipped", state: "pending", message: "halted"))
        #expect(skipped.code == .skipped && skipped.state == nil && skipped.message == "halted")
        #expect(skipped.summary == "skipped: halted")
        let link = try #require(AttemptFailure(storedCode: "link failed", state: "uploading", message: nil))
        #expect(link.code == .linkFailed && link.state == .uploading && link.message.isEmpty)
        #expect(AttemptFailure(storedCode: nil, state: "uploading", message: "x") == nil)
    }

    /// The CLI's error-object vocabulary; a skipped device did not fail, so it has no kind.
    @Test(arguments: [
        (AttemptFailure.Code.linkFailed, "link"),
        (.deviceRejected, "device_refused"),
        (AttemptFailure.Code(.notSwapped), "upgrade_outcome"),
        (AttemptFailure.Code(.invalidPackage), "bad_input"),
        (.notInInventory, "bad_input"),
        (.transportUnavailable, "link"),
    ])
    func aCodeHasTheKindOfTheCLIsErrorObject(code: AttemptFailure.Code, kind: String) {
        #expect(code.kind == kind)
    }

    @Test func aSkippedDeviceHasNoKind() {
        #expect(AttemptFailure.Code.skipped.kind == nil)
    }

    /// A link failure before the parameters were answered never reached the device.
    @Test(arguments: [
        (AttemptFailure.Code.linkFailed, FirmwareUpgrade.State?.some(.idle), false),
        (.linkFailed, .requestingParameters, false),
        (.linkFailed, nil, false),
        (.linkFailed, .readingBootloaderInfo, true),
        (.linkFailed, .uploading, true),
        (AttemptFailure.Code(.reconnectFailed), .reconnecting, true),
        (.deviceRejected, .requestingParameters, true),
        (.transportUnavailable, nil, true),
    ])
    func whetherTheDeviceAnswered(code: AttemptFailure.Code, state: FirmwareUpgrade.State?, answered: Bool) {
        #expect(AttemptFailure(code: code, state: state, message: "").deviceAnswered == answered)
    }

    /// The engine's error classifies the attempt by the same rule.
    @Test func anEngineLinkFailureBeforeAnyAnswerIsUnreached() {
        let unreached = AttemptResult(FirmwareUpgradeError(.linkFailed, state: .requestingParameters, "no answer"))
        #expect(
            unreached
                == .linkFailed(
                    AttemptFailure(code: .linkFailed, state: .requestingParameters, message: "no answer"),
                    reached: false
                )
        )
        let reached = AttemptResult(FirmwareUpgradeError(.linkFailed, state: .uploading, "gone"))
        #expect(
            reached == .linkFailed(AttemptFailure(code: .linkFailed, state: .uploading, message: "gone"), reached: true)
        )
        let refused = AttemptResult(FirmwareUpgradeError(.deviceRejected, state: .uploading, "NO_FREE_SLOT"))
        #expect(refused == .failed(AttemptFailure(code: .deviceRejected, state: .uploading, message: "NO_FREE_SLOT")))
    }
}
