import MCUmgr

/// Builds the in-process simulated device for `sim://` URLs.
enum InProcessSimulator {
    static func transport(options: [String: String], verbosity: Int) throws -> any SMPTransport {
        throw SMPTransportError(.unavailable, "sim:// is being wired up")
    }
}
