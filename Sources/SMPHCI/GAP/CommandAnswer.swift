/// What an event says about the one command a GAP machine has in flight.
enum CommandAnswer: Sendable, Hashable {
    /// The event does not answer that command: another command's answer (a stale one, or one
    /// for another machine sharing the controller), or not an answer at all.
    case notAnswer
    /// A Command Complete with success.
    case completed(HCI.CommandComplete)
    /// A Command Status with success: the command is pending, its outcome comes later.
    case pending
    /// A Command Complete or Command Status with a failing status.
    case refused(HCIStatus)

    /// Reads an event as the answer to a command.
    /// - Parameters:
    ///   - event: the event.
    ///   - opcode: the command awaited.
    init(_ event: HCIEvent, to opcode: HCIOpcode) {
        switch event {
        case .commandComplete(let complete) where complete.opcode == opcode:
            // A Command Complete without even a status answers nothing usable: a refusal.
            guard let status = complete.status else {
                self = .refused(.unspecifiedError)
                return
            }
            self = status.isSuccess ? .completed(complete) : .refused(status)
        case .commandStatus(let status) where status.opcode == opcode:
            self = status.status.isSuccess ? .pending : .refused(status.status)
        default:
            self = .notAnswer
        }
    }
}

extension HCIError {
    /// The controller refused a command.
    static func refused(_ name: String, _ status: HCIStatus) -> HCIError {
        HCIError(.commandFailed, "the controller refused \(name): \(status)", status: status)
    }

    /// The controller did not answer a command in time.
    static func unanswered(_ name: String) -> HCIError {
        HCIError(.timeout, "the controller did not answer \(name) in time")
    }
}

extension HCIOpcode {
    /// The specification's name of a command the GAP machines send, for messages; the opcode
    /// itself for any other.
    var gapCommandName: String {
        let names: [HCIOpcode: String] = [
            .leSetScanParameters: HCI.LESetScanParameters.name,
            .leSetScanEnable: HCI.LESetScanEnable.name,
            .leSetExtendedScanParameters: HCI.LESetExtendedScanParameters.name,
            .leSetExtendedScanEnable: HCI.LESetExtendedScanEnable.name,
            .leSetAdvertisingParameters: HCI.LESetAdvertisingParameters.name,
            .leSetAdvertisingData: HCI.LESetAdvertisingData.name,
            .leSetScanResponseData: HCI.LESetScanResponseData.name,
            .leSetAdvertisingEnable: HCI.LESetAdvertisingEnable.name,
        ]
        return names[self] ?? "\(self)"
    }
}
