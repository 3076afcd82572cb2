import MCUboot
import Testing

@Suite struct ImageVersionTests {
    @Test(arguments: [
        (ImageVersion(major: 1, minor: 2, revision: 3), "1.2.3"),
        (ImageVersion(major: 1, minor: 2, revision: 3, build: 7), "1.2.3.7"),
        (ImageVersion(major: 255, minor: 255, revision: 65535, build: 4_294_967_295), "255.255.65535.4294967295"),
        (ImageVersion(major: 0, minor: 0, revision: 0), "0.0.0"),
    ])
    func descriptionIsWhatSMPReports(version: ImageVersion, text: String) {
        #expect(version.description == text)
    }

    @Test func imgtoolDescriptionAlwaysShowsTheBuild() {
        #expect(ImageVersion(major: 1, minor: 2, revision: 3).imgtoolDescription == "1.2.3+0")
        #expect(ImageVersion(major: 1, minor: 2, revision: 3, build: 7).imgtoolDescription == "1.2.3+7")
    }

    @Test(arguments: [
        ("1.2.3", ImageVersion(major: 1, minor: 2, revision: 3)),
        ("1.2.3+7", ImageVersion(major: 1, minor: 2, revision: 3, build: 7)),
        ("1.2.3.7", ImageVersion(major: 1, minor: 2, revision: 3, build: 7)),
        (" 2.0 ", ImageVersion(major: 2, minor: 0, revision: 0)),
        ("3", ImageVersion(major: 3, minor: 0, revision: 0)),
        ("0.0.0+0", ImageVersion(major: 0, minor: 0, revision: 0)),
    ])
    func parsesImgtoolManifestAndSMPText(text: String, version: ImageVersion) {
        #expect(ImageVersion(text) == version)
    }

    @Test(arguments: ["", "1.2.3.4.5", "256.0.0", "1.2.65536", "1.2.3+x", "a.b.c", "1..3", "1.2.3+1+2", "1.2.3.4+5"])
    func rejectsMalformedText(text: String) {
        #expect(ImageVersion(text) == nil)
    }

    @Test func ordersByMajorMinorRevisionThenBuild() {
        let versions = ["1.2.3+7", "1.2.3", "0.9.9+99", "1.10.0", "1.2.4", "1.2.3+8"].compactMap { ImageVersion($0) }
        #expect(
            versions.sorted().map(\.imgtoolDescription) == [
                "0.9.9+99", "1.2.3+0", "1.2.3+7", "1.2.3+8", "1.2.4+0", "1.10.0+0",
            ]
        )
        #expect(
            ImageVersion(major: 1, minor: 2, revision: 3, build: 9).withoutBuild
                == ImageVersion(major: 1, minor: 2, revision: 3)
        )
    }

    @Test func securityCounterAutoPacksMajorMinorRevision() {
        // imgtool --security-counter auto on 1.2.3 writes 0x01020003 (TLV bytes 03 00 02 01).
        #expect(ImageVersion(major: 1, minor: 2, revision: 3).securityCounterValue == 0x0102_0003)
    }
}
