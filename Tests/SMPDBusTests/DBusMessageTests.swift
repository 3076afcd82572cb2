import Foundation
import SMPBytes
import SMPTestSupport
import Testing

@testable import SMPDBus

/// Our marshalling against messages made by dbus-fast (little endian, header fields in code
/// order, as ours) and GLib (big endian, its own field order).
struct DBusMessageTests {
    @Test func theVectorsLoad() throws {
        let file = try DBusVectors.load()
        #expect(file.cases.count >= 20)
        #expect(file.generator.contains("dbus-fast"))
    }

    @Test(arguments: DBusVectors.cases)
    func ourEncodingIsDBusFastsByteForByte(_ vector: DBusVectors.Case) throws {
        let message = try vector.message(asDBusFastWritesIt: true)
        #expect(Hex.encode(try message.encoded(endianness: .little)) == vector.little)
    }

    @Test(arguments: DBusVectors.cases)
    func dbusFastsBytesDecodeToTheMessage(_ vector: DBusVectors.Case) throws {
        let decoded = try DBusMessage(decoding: try #require(Hex.decode(vector.little)))
        #expect(decoded == (try vector.message(asDBusFastWritesIt: true)))
    }

    @Test(arguments: DBusVectors.cases)
    func glibsBigEndianBytesDecodeToTheMessage(_ vector: DBusVectors.Case) throws {
        let bytes = try #require(Hex.decode(vector.big))
        #expect(bytes.first == UInt8(ascii: "B"))
        let decoded = try DBusMessage(decoding: bytes)
        #expect(decoded == (try vector.message()))
        // Our own big-endian encoding reads back the same.
        #expect(try DBusMessage(decoding: try decoded.encoded(endianness: .big)) == decoded)
    }

    @Test(
        "the committed vectors are what dbus-fast and GLib produce today",
        .requiring(Peers.available("dbus_fast"), "needs the peers' venv with dbus-fast (scripts/setup-peers.sh)"),
        .enabled(
            if: Peers.isCI || FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"),
            "needs /usr/bin/python3 with python3-gi for GLib"
        )
    )
    func vectorsRegenerateIdentically() async throws {
        let script = Peers.packageRoot.appendingPathComponent("scripts/generate-dbus-vectors.py").path
        let python = try #require(Peers.python, "no python3 with the peers")
        let output = try await Peers.run(python, [script, "--check"])
        let committed = try Data(
            contentsOf: Peers.packageRoot.appendingPathComponent("Tests/SMPDBusTests/Fixtures/dbus-vectors.json")
        )
        #expect(output == committed, "regenerate with .venv/bin/python scripts/generate-dbus-vectors.py")
    }
}
