/// How MCUboot's serial recovery (`boot/boot_serial`) was built: its buffers and the optional
/// commands. The defaults are MCUboot's Zephyr Kconfig defaults, and where a default is not
/// known the less forgiving choice (docs/SIMULATOR.md, "Serial recovery").
public struct SerialRecoveryConfiguration: Sendable, Hashable {
    /// `BOOT_SERIAL_MAX_RECEIVE_SIZE`: the decoded console packet (length, message, CRC) it
    /// reassembles; a longer message is dropped without an answer. Zephyr's default is 1024.
    public var receiveBufferSize: Int
    /// `BOOT_MAX_LINE_INPUT_LEN`: the longest console line it keeps (marker and newline
    /// included); a longer line is cut and its packet lost.
    public var maximumLineLength: Int
    /// `BOOT_LINE_BUFS`: console lines that wait while recovery handles a message; a line that
    /// finds every buffer taken is lost.
    public var lineBuffers: Int
    /// The flash write alignment: a chunk that is not the last is written up to a multiple of it
    /// and the answer's `off` asks for the rest again; the last chunk is padded with `0xff`.
    public var flashAlignment: Int
    /// `BOOT_MGMT_ECHO` (off by default): OS echo is answered; otherwise `rc 8`.
    public var echo: Bool
    /// `BOOT_MGMT_MCUMGR_PARAMS` (added in 2026; off here): MCUmgr parameters answer
    /// `buf_size` = ``receiveBufferSize`` and `buf_count` 1.
    public var mcumgrParameters: Bool
    /// `MCUBOOT_SERIAL_DIRECT_IMAGE_UPLOAD`: an upload's `image` names a slot (0 and 1: image 0's
    /// primary, 2: its secondary, 3: image 1's primary, 4: its secondary) instead of an image
    /// whose primary slot is written.
    public var directImageUpload: Bool
    /// `BOOT_MGMT_CUSTOM_STORAGE_ERASE`: Zephyr basic (group 63) erase storage is answered.
    public var storageErase: Bool

    /// Creates a configuration; every default is MCUboot's Zephyr default.
    public init(
        receiveBufferSize: Int = 1024,
        maximumLineLength: Int = 128,
        lineBuffers: Int = 8,
        flashAlignment: Int = 8,
        echo: Bool = false,
        mcumgrParameters: Bool = false,
        directImageUpload: Bool = false,
        storageErase: Bool = false
    ) {
        self.receiveBufferSize = max(64, receiveBufferSize)
        self.maximumLineLength = max(8, maximumLineLength)
        self.lineBuffers = max(1, lineBuffers)
        self.flashAlignment = max(1, flashAlignment)
        self.echo = echo
        self.mcumgrParameters = mcumgrParameters
        self.directImageUpload = directImageUpload
        self.storageErase = storageErase
    }

    /// The largest SMP message the recovery accepts: its buffer holds the console packet, so
    /// two bytes of length and two of CRC come off (the same limit is applied on every link).
    public var maximumMessageSize: Int { receiveBufferSize - 4 }
}
