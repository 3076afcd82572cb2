/// What the bring-up learnt about a controller, for the rest of the host.
public struct ControllerInfo: Sendable, Hashable {
    /// Read Local Version Information's answer.
    public var version: HCI.ReadLocalVersionInformation.ReturnParameters
    /// The public address (00:00:00:00:00:00 for a controller without one).
    public var publicAddress: BluetoothAddress
    /// The random address set during bring-up, if one was asked for.
    public var randomAddress: BluetoothAddress?
    /// The commands the controller supports.
    public var supportedCommands: HCISupportedCommands
    /// The most data bytes in one ACL packet toward the controller: L2CAP PDUs are cut to this.
    public var aclDataPacketLength: Int
    /// How many ACL packets the controller holds: the host sends no more until Number Of
    /// Completed Packets frees some.
    public var aclDataPacketCount: Int
    /// Whether the buffers are LE's own (LE Read Buffer Size) or shared with BR/EDR (Read Buffer
    /// Size, because LE reported none).
    public var aclBuffersAreShared: Bool

    /// Whether the controller scans with the extended commands (and reports with LE Extended
    /// Advertising Report).
    public var supportsExtendedScanning: Bool { supportedCommands.extendedScanning }

    /// Creates the information.
    public init(
        version: HCI.ReadLocalVersionInformation.ReturnParameters,
        publicAddress: BluetoothAddress,
        randomAddress: BluetoothAddress?,
        supportedCommands: HCISupportedCommands,
        aclDataPacketLength: Int,
        aclDataPacketCount: Int,
        aclBuffersAreShared: Bool
    ) {
        self.version = version
        self.publicAddress = publicAddress
        self.randomAddress = randomAddress
        self.supportedCommands = supportedCommands
        self.aclDataPacketLength = aclDataPacketLength
        self.aclDataPacketCount = aclDataPacketCount
        self.aclBuffersAreShared = aclBuffersAreShared
    }
}
