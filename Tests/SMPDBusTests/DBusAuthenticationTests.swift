import Testing

@testable import SMPDBus

struct DBusAuthenticationTests {
    let guid = "0123456789abcdef0123456789abcdef"

    @Test func theFirstBytesAreTheNulAndAuthExternalWithTheUidInHex() {
        let auth = DBusAuthentication(uid: 1000, negotiateUnixFDs: true)
        #expect(auth.initialBytes == [0] + Array("AUTH EXTERNAL 31303030\r\n".utf8))
        #expect(
            DBusAuthentication(uid: 0, negotiateUnixFDs: true).initialBytes == [0] + Array("AUTH EXTERNAL 30\r\n".utf8)
        )
    }

    @Test func okThenAgreeGivesDescriptors() throws {
        var auth = DBusAuthentication(uid: 0, negotiateUnixFDs: true)
        #expect(try auth.receive(line: "OK \(guid)") == .send(Array("NEGOTIATE_UNIX_FD\r\n".utf8)))
        #expect(
            try auth.receive(line: "AGREE_UNIX_FD")
                == .authenticated(send: Array("BEGIN\r\n".utf8), serverGUID: guid, unixFDs: true)
        )
    }

    @Test func anErrorToTheNegotiationMeansNoDescriptors() throws {
        var auth = DBusAuthentication(uid: 0, negotiateUnixFDs: true)
        _ = try auth.receive(line: "OK \(guid)")
        #expect(
            try auth.receive(line: "ERROR \"not supported\"")
                == .authenticated(send: Array("BEGIN\r\n".utf8), serverGUID: guid, unixFDs: false)
        )
    }

    @Test func withoutNegotiationOkBegins() throws {
        var auth = DBusAuthentication(uid: 0, negotiateUnixFDs: false)
        #expect(
            try auth.receive(line: "OK \(guid)")
                == .authenticated(send: Array("BEGIN\r\n".utf8), serverGUID: guid, unixFDs: false)
        )
    }

    @Test(arguments: ["REJECTED EXTERNAL", "OK", "OK nothex", "DATA", "", "OK \u{7}"])
    func anythingButOkIsRefused(_ line: String) {
        var auth = DBusAuthentication(uid: 0, negotiateUnixFDs: true)
        #expect(throws: DBusError(.authenticationFailed)) { try auth.receive(line: line) }
    }

    @Test func linesAfterTheEndAreRefused() throws {
        var auth = DBusAuthentication(uid: 0, negotiateUnixFDs: false)
        _ = try auth.receive(line: "OK \(guid)")
        #expect(throws: DBusError(.authenticationFailed)) { try auth.receive(line: "OK \(guid)") }
    }

    @Test func addresses() throws {
        #expect(
            try DBusAddress("unix:path=/run/dbus/system_bus_socket").endpoints == [.path("/run/dbus/system_bus_socket")]
        )
        #expect(try DBusAddress("unix:abstract=/tmp/dbus-x,guid=00").endpoints == [.abstract("/tmp/dbus-x")])
        #expect(try DBusAddress("tcp:host=x;unix:path=/a%20b").endpoints == [.path("/a b")])
        #expect(throws: DBusError(.unsupported)) { try DBusAddress("tcp:host=localhost,port=1") }
        #expect(throws: DBusError.self) { try DBusAddress("nonsense") }
    }
}
