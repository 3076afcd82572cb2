import SMPCBOR
import SMPCore
import SMPTestSupport
import Testing

@testable import SMPSimulator

@Suite("ResponseEncoding")
struct HandlerSupportTests {
    @Test("answers like zcbor: indefinite-length maps and arrays, keys in handler order")
    func zcborBytes() {
        var map = CBORMap()
        map.put("rc", 8)
        #expect(TestBytes.hex(ResponseEncoding.encode(map, indefinite: true)) == "bf627263" + "08ff")
        #expect(TestBytes.hex(ResponseEncoding.encode(map, indefinite: false)) == "a1627263" + "08")
        var nested = CBORMap()
        nested.put("b", .array([1, 2]))
        nested.put("a", .map(["x": true]))
        #expect(TestBytes.hex(ResponseEncoding.encode(nested, indefinite: true)) == "bf61629f0102ff6161bf6178f5ffff")
    }

    @Test("a group error is err{group, rc} for v2 and the translated rc for v1")
    func groupErrorShapes() {
        var extra = CBORMap()
        extra.put("len", 5)
        let failure = HandlerFailure.group(.fileSystem, 11, extra: extra)
        let v2 = ResponseEncoding.failureMap(failure, legacy: false)
        #expect(v2["err"]?["group"] == 8)
        #expect(v2["err"]?["rc"] == 11)
        #expect(v2["len"] == 5)
        let v1 = ResponseEncoding.failureMap(failure, legacy: true)
        #expect(v1["rc"] == 1)
        #expect(v1["err"] == nil)
        #expect(v1["len"] == 5)
        #expect(ResponseEncoding.failureMap(.management(.notSupported), legacy: false)["rc"] == 8)
    }

    /// `smp-protocol.md` §3.3: the image group's translation.
    static let imageTranslationCases: [(Int, SMPReturnCode)] = [
        (3, .noEntry), (4, .noEntry), (9, .badState), (27, .badState), (28, .badState), (15, .noMemory),
        (14, .invalidValue), (19, .invalidValue), (20, .invalidValue), (21, .invalidValue), (22, .invalidValue),
        (24, .invalidValue), (25, .invalidValue), (1, .unknown), (8, .unknown), (23, .unknown), (30, .unknown),
        (31, .unknown), (33, .unknown),
    ]

    @Test("image group errors translate to legacy rc as Zephyr does", arguments: imageTranslationCases)
    func imageTranslation(rc: Int, expected: SMPReturnCode) {
        #expect(ResponseEncoding.legacyCode(group: .image, rc: rc) == expected)
    }

    static let otherTranslationCases: [(SMPGroup, Int, SMPReturnCode)] = [
        (.os, 2, .invalidValue), (.os, 3, .noEntry), (.os, 4, .noEntry), (.os, 5, .unknown),
        (.fileSystem, 2, .invalidValue), (.fileSystem, 3, .noEntry), (.fileSystem, 14, .noEntry),
        (.fileSystem, 11, .unknown), (.settings, 3, .noEntry), (.settings, 2, .invalidValue),
        (.statistics, 2, .noEntry), (.shell, 3, .invalidValue), (.enumeration, 4, .noEntry), (.suit, 1, .unknown),
    ]

    @Test("other groups translate too", arguments: otherTranslationCases)
    func otherTranslation(group: SMPGroup, rc: Int, expected: SMPReturnCode) {
        #expect(ResponseEncoding.legacyCode(group: group, rc: rc) == expected)
    }
}
