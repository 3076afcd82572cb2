import HTTPTypes
import MCUmgrWeb
import Testing

@Suite struct WebServerTests {
    @Test func aNonLoopbackAddressNeedsAllowRemote() throws {
        let remote = ListenAddress(host: "0.0.0.0", port: 8080)
        #expect(throws: WebConfigurationError.self) {
            try WebServer(configuration: .init(address: remote), environment: .init())
        }
        let allowed = try WebServer(configuration: .init(address: remote, allowRemote: true), environment: .init())
        #expect(allowed.configuration.remoteWarning?.hasPrefix("warning:") == true)
        let local = try WebServer(configuration: .init(), environment: .init())
        #expect(local.configuration.remoteWarning == nil)
    }

    @Test func theURLCarriesTheToken() throws {
        let token = try AccessToken("0123456789abcdef0123456789abcdef")
        let server = try WebServer(configuration: .init(token: token), environment: .init())
        #expect(server.configuration.url == "http://127.0.0.1:8080/?token=0123456789abcdef0123456789abcdef")
    }
}

extension WebServerTests {
    @Test func aWildcardAddressPrintsTheLoopbackURL() throws {
        let token = try AccessToken("0123456789abcdef0123456789abcdef")
        let server = try WebServer(
            configuration: .init(address: .init(host: "0.0.0.0", port: 9000), allowRemote: true, token: token),
            environment: .init()
        )
        #expect(server.configuration.url == "http://127.0.0.1:9000/?token=0123456789abcdef0123456789abcdef")
        #expect(server.configuration.remoteWarning?.contains("this machine's address with port 9000") == true)
        let anyPort = try WebServer(
            configuration: .init(address: .init(host: "0.0.0.0", port: 0), allowRemote: true, token: token),
            environment: .init()
        )
        let warning = try #require(anyPort.configuration.remoteWarning)
        #expect(warning.hasSuffix("open this machine's address with the port of the URL below and the same token"))
        #expect(!warning.contains("port 0"))
    }
}
