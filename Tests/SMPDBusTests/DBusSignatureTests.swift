import Testing

@testable import SMPDBus

struct DBusSignatureTests {
    @Test(arguments: ["", "y", "a{sv}", "a(oa{sa{sv}})", "(yv)", "aay", "a{oa{sa{sv}}}", "hq", "(i(ii))"])
    func validSignaturesRoundTrip(_ text: String) throws {
        let signature = try DBusSignature(text)
        #expect(signature.rawValue == text)
        #expect(signature.types.map(\.description).joined() == text)
    }

    @Test(arguments: [
        "a", "(", ")", "()", "a{vs}", "a{s}", "a{sss}", "{sv}", "(s", "z", "a{sv", "aaa{", "(()",
        String(repeating: "a", count: 33) + "y",
        String(repeating: "(", count: 33) + "y" + String(repeating: ")", count: 33),
        String(repeating: "y", count: 256),
    ])
    func invalidSignaturesAreRefused(_ text: String) {
        #expect(throws: DBusError(.invalidSignature)) { try DBusSignature(text) }
    }

    @Test func thirtyTwoArraysAreAllowed() throws {
        let text = String(repeating: "a", count: 32) + "y"
        #expect(try DBusSignature(text).types.count == 1)
    }

    @Test func alignments() {
        #expect(DBusType.byte.alignment == 1)
        #expect(DBusType.uint16.alignment == 2)
        #expect(DBusType.string.alignment == 4)
        #expect(DBusType.structure([.byte]).alignment == 8)
        #expect(DBusType.dictionary(key: .string, value: .variant).alignment == 4)
        #expect(DBusType.variant.alignment == 1)
    }
}
