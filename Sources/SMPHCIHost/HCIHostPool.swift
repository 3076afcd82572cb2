/// The hosts of this process, one per controller: several centrals — the devices of a fleet
/// reached through one dongle (`--ble-per-adapter N`), or a reconnection while another link is
/// up — share one host, because a controller has one host: a second opener of a UART would read
/// half of the first one's bytes, and a socket controller refuses a second host.
///
/// The pool holds hosts weakly: a host lives while a central or a connection uses it, and closes
/// its controller when the last one lets go.
actor HCIHostPool {
    /// The process's pool.
    static let shared = HCIHostPool()

    /// A host, not kept alive by the pool.
    private final class Entry {
        weak var host: HCIHost?
        init(_ host: HCIHost) { self.host = host }
    }

    private var hosts: [HCIControllerAddress: Entry] = [:]
    /// Opens in progress, so that centrals asking at once open the controller once.
    private var opening: [HCIControllerAddress: Task<HCIHost, any Error>] = [:]

    /// The host of a controller: the one in use, or one opened now.
    /// - Parameters:
    ///   - controller: the controller.
    ///   - open: opens and brings up a host, when none is in use.
    /// - Returns: the host.
    /// - Throws: what `open` throws.
    func host(
        for controller: HCIControllerAddress,
        open: @escaping @Sendable () async throws -> HCIHost
    ) async throws -> HCIHost {
        if let host = hosts[controller]?.host, await host.isUsable { return host }
        if let pending = opening[controller] { return try await pending.value }
        let task = Task { try await open() }
        opening[controller] = task
        defer { opening[controller] = nil }
        let host = try await task.value
        hosts[controller] = Entry(host)
        return host
    }
}
