/// Command flow control (Core Vol 4 Part E 4.4): how many commands the controller accepts now.
///
/// Every Command Complete and Command Status says how many (Num_HCI_Command_Packets): the
/// number itself, not an increment, and it may be 0 until a later event (a no-operation Command
/// Complete, for instance) grants more. After power-on and after a reset the host may send one.
public struct HCICommandCredits: Sendable, Hashable {
    /// Commands the host may send now.
    public private(set) var available: Int

    /// Creates the credits of a controller just powered on or reset: one.
    public init() { self.available = 1 }

    /// The controller said how many commands it accepts.
    /// - Parameter numHCICommandPackets: Num_HCI_Command_Packets of a Command Complete or Status.
    public mutating func update(numHCICommandPackets: UInt8) {
        available = Int(numHCICommandPackets)
    }

    /// Takes a credit to send a command.
    /// - Returns: `false` (taking nothing) when none is available: wait for the next Command
    ///   Complete or Command Status.
    public mutating func take() -> Bool {
        guard available > 0 else { return false }
        available -= 1
        return true
    }
}
