import Foundation
import HTTPTypes
import MCUmgrConnect

/// The devices the page has opened, by id, and the URLs used most recently (kept across runs
/// by the environment).
actor DeviceRegistry {
    private let environment: WebEnvironment
    private var sessions: [String: DeviceSession] = [:]
    private var idsByURL: [String: String] = [:]
    private var next = 1
    /// Most recent first, at most ``recentLimit``.
    private(set) var recent: [String]
    private let recentLimit = 10

    init(environment: WebEnvironment) {
        self.environment = environment
        recent = Array(environment.loadRecent().prefix(recentLimit))
    }

    /// The session for a URL, made on first use.
    /// - Parameter text: the connection URL.
    /// - Returns: the session.
    /// - Throws: `WebError` 400 for a malformed URL, or the transport's error.
    func open(_ text: String) throws -> DeviceSession {
        let url: ConnectionURL
        do {
            url = try ConnectionURL(parsing: text.trimmingCharacters(in: .whitespaces))
        } catch {
            throw WebError(.badRequest, "Device URL: \(error.message)")
        }
        let key = url.description
        recent.removeAll { $0 == key }
        recent.insert(key, at: 0)
        if recent.count > recentLimit { recent.removeLast() }
        environment.saveRecent(recent)
        if let id = idsByURL[key], let session = sessions[id] { return session }
        let transport = try environment.connect(url)
        let id = "d\(next)"
        next += 1
        let session = DeviceSession(id: id, url: key, transport: transport, environment: environment)
        sessions[id] = session
        idsByURL[key] = id
        return session
    }

    /// The session with an id.
    /// - Throws: `WebError` 404.
    func session(_ id: String) throws -> DeviceSession {
        guard let session = sessions[id] else {
            throw WebError(.notFound, "no device \(id) here; add it again by its URL")
        }
        return session
    }

    /// Every session, by id.
    var all: [DeviceSession] { sessions.keys.sorted().compactMap { sessions[$0] } }
}
