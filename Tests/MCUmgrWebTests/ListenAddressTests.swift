import HTTPTypes
import Testing

@testable import MCUmgrWeb

@Suite struct ListenAddressTests {
    @Test func parsesIPv4IPv6AndLocalhost() throws {
        #expect(try ListenAddress(parsing: "127.0.0.1:8080") == ListenAddress(host: "127.0.0.1", port: 8080))
        #expect(try ListenAddress(parsing: "[::1]:9000") == ListenAddress(host: "::1", port: 9000))
        #expect(try ListenAddress(parsing: "localhost:1") == ListenAddress(host: "localhost", port: 1))
        #expect(try ListenAddress(parsing: "[::1]:9000").description == "[::1]:9000")
        // Port 0: the server takes any free port and prints the one it got.
        #expect(try ListenAddress(parsing: "127.0.0.1:0") == ListenAddress(host: "127.0.0.1", port: 0))
    }

    @Test func refusesMalformedAddressesNamingTheOption() {
        for text in ["127.0.0.1", "127.0.0.1:-1", "127.0.0.1:70000", ":8080", "::1:8080", "[::1]8080", "host:port"] {
            #expect(throws: WebConfigurationError.self, "\(text)") { try ListenAddress(parsing: text) }
        }
        #expect((try? ListenAddress(parsing: "x")) == nil)
    }

    @Test func knowsLoopback() {
        #expect(ListenAddress(host: "127.0.0.1", port: 1).isLoopback)
        #expect(ListenAddress(host: "127.1.2.3", port: 1).isLoopback)
        #expect(ListenAddress(host: "::1", port: 1).isLoopback)
        #expect(ListenAddress(host: "localhost", port: 1).isLoopback)
        #expect(!ListenAddress(host: "0.0.0.0", port: 1).isLoopback)
        #expect(!ListenAddress(host: "192.168.1.2", port: 1).isLoopback)
        #expect(!ListenAddress(host: "::", port: 1).isLoopback)
    }
}

extension ListenAddressTests {
    /// On every interface, any address literal with our port names us; a DNS name (what
    /// rebinding needs) still does not.
    @Test func aWildcardAddressTakesAddressLiteralsOnly() {
        let wildcard = ListenAddress(host: "0.0.0.0", port: 8080)
        #expect(wildcard.accepts(host: "192.168.1.5:8080"))
        #expect(wildcard.accepts(host: "[fe80::1]:8080"))
        #expect(wildcard.accepts(host: "localhost:8080"))
        #expect(!wildcard.accepts(host: "attacker.example:8080"))
        #expect(!wildcard.accepts(host: "192.168.1.5:9090"))
        #expect(!wildcard.accepts(host: "1.2.3.4.example:8080"))
        #expect(wildcard.local == ListenAddress(host: "127.0.0.1", port: 8080))
        let specific = ListenAddress(host: "192.168.1.5", port: 8080)
        #expect(specific.accepts(host: "192.168.1.5:8080"))
        #expect(!specific.accepts(host: "192.168.1.6:8080"))
        #expect(!specific.accepts(host: "localhost:8080"))
    }
}
