import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import MCUmgrWeb
import NIOCore
import Testing

/// Each security rule, with a request that only that rule turns away.
@Suite struct SecurityMiddlewareTests {
    @Test func aRequestWithoutTheTokenIsRefused() async throws {
        let harness = try WebHarness()
        try await harness.test { client in
            let response = try await client.execute(uri: "/", method: .get, headers: harness.headers(cookie: false))
            #expect(response.status == .unauthorized)
            #expect(response.errorLine?.contains("access token") == true)
            let api = try await client.execute(
                uri: "/api/connections",
                method: .get,
                headers: harness.headers(cookie: false)
            )
            #expect(api.status == .unauthorized)
        }
    }

    @Test func aWrongTokenIsRefused() async throws {
        let harness = try WebHarness()
        try await harness.test { client in
            var headers = harness.headers(cookie: false)
            headers[.cookie] = "mcumgr_ui_token=0123456789abcdef0123456789abcdeX"
            #expect(try await client.execute(uri: "/", method: .get, headers: headers).status == .unauthorized)
            let query = try await client.execute(
                uri: "/?token=0123456789abcdef",
                method: .get,
                headers: harness.headers(cookie: false)
            )
            #expect(query.status == .unauthorized)
        }
    }

    @Test func theTokenInTheQuerySetsAStrictHttpOnlyCookie() async throws {
        let harness = try WebHarness()
        try await harness.test { client in
            let response = try await client.execute(
                uri: "/?token=\(harness.token.value)",
                method: .get,
                headers: harness.headers(cookie: false)
            )
            #expect(response.status == .ok)
            let cookie = try #require(response.headers[.setCookie])
            #expect(cookie.contains("mcumgr_ui_token=\(harness.token.value)"))
            #expect(cookie.contains("HttpOnly"))
            #expect(cookie.contains("SameSite=Strict"))
            // The cookie alone is then enough.
            #expect(try await client.get("/", harness).status == .ok)
        }
    }

    /// DNS rebinding: a page on another name reaching this port sends its own name. (Here the
    /// test client's authority is `localhost` and the `Host` field a second value: every one
    /// must name this server.)
    @Test func aForeignHostIsRefused() async throws {
        let harness = try WebHarness()
        try await harness.test { client in
            let rebound = try await client.execute(
                uri: "/",
                method: .get,
                headers: harness.headers(host: "attacker.example:8080")
            )
            #expect(rebound.status == .misdirectedRequest)
            let otherPort = try await client.execute(
                uri: "/",
                method: .get,
                headers: harness.headers(host: "127.0.0.1:9999")
            )
            #expect(otherPort.status == .misdirectedRequest)
            let localhost = try await client.execute(
                uri: "/",
                method: .get,
                headers: harness.headers(host: "localhost:8080")
            )
            #expect(localhost.status == .ok)
        }
    }

    @Test func aChangeWithoutOurOriginIsRefused() async throws {
        let harness = try WebHarness()
        try await harness.test { client in
            let body = ByteBuffer(string: #"{"url": "sim://"}"#)
            let none = try await client.execute(
                uri: "/api/devices",
                method: .post,
                headers: harness.headers(origin: nil, json: true),
                body: body
            )
            #expect(none.status == .forbidden)
            #expect(none.errorLine?.contains("Origin") == true)
            let foreign = try await client.execute(
                uri: "/api/devices",
                method: .post,
                headers: harness.headers(origin: "http://attacker.example", json: true),
                body: body
            )
            #expect(foreign.status == .forbidden)
            let ours = try await client.execute(
                uri: "/api/devices",
                method: .post,
                headers: harness.headers(json: true),
                body: body
            )
            #expect(ours.status == .ok)
        }
    }

    @Test func anUnknownPathIsOneLineToo() async throws {
        let harness = try WebHarness()
        try await harness.test { client in
            let response = try await client.get("/no/such/page", harness)
            #expect(response.status == .notFound)
            #expect(response.errorLine == "no such page or call: /no/such/page")
        }
    }

    @Test func everyAnswerForbidsInlineScript() async throws {
        let harness = try WebHarness()
        try await harness.test { client in
            for response in [
                try await client.get("/", harness),
                try await client.get("/app.js", harness),
                try await client.execute(uri: "/", method: .get, headers: harness.headers(cookie: false)),
                try await client.get("/no/such/page", harness),
            ] {
                let policy = try #require(response.headers[.contentSecurityPolicy])
                #expect(policy.contains("default-src 'self'"))
                #expect(policy.contains("script-src 'self'"))
                #expect(!policy.contains("unsafe-inline"))
            }
        }
    }
}
