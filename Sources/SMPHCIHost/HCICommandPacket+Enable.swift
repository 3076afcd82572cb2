import SMPHCI

extension HCICommandPacket {
    /// Whether this turns scanning or advertising on or off (Enable is the first parameter of
    /// LE Set Scan Enable, LE Set Extended Scan Enable and LE Set Advertising Enable).
    var isEnableSwitch: Bool {
        [HCIOpcode.leSetScanEnable, .leSetExtendedScanEnable, .leSetAdvertisingEnable].contains(opcode)
            && !parameters.isEmpty
    }

    /// Whether this turns scanning or advertising on.
    var enables: Bool { isEnableSwitch && parameters.first == 1 }

    /// The same command with Enable 0: what undoes it.
    var disabling: HCICommandPacket {
        var copy = self
        if !copy.parameters.isEmpty { copy.parameters[0] = 0 }
        return copy
    }
}

/// The enable a procedure sent and has not undone, so that a cancelled procedure can undo it
/// even while the enable is still in flight: the controller answers commands in order, so the
/// disable sent after it leaves the controller off. (The machines' own `stop()` waits for the
/// answer in flight, and a cancelled procedure reads no more answers.)
struct EnableTracker {
    private var enabled: HCICommandPacket?

    mutating func sent(_ command: HCICommandPacket) {
        guard command.isEnableSwitch else { return }
        enabled = command.enables ? command : nil
    }

    /// The command that turns off what was turned on, if anything is.
    var undo: HCICommandPacket? { enabled?.disabling }
}
