import Foundation
import MCUboot
import Testing

@testable import SMPSimulator

@Suite("ImageUploadAlgorithm")
struct ImageUploadSessionTests {
    static let image = TestImages.image("2.0.0")
    static let sha = Array(repeating: UInt8(0xab), count: 32)
    static let model = MCUbootModelTests.model(.swapUsingMove)
    static let session = ImageUploadSession(image: 0, slot: 1, length: image.count, sha: sha, offset: 512)

    struct Case: Sendable, CustomStringConvertible {
        var name: String
        var chunk: ImageUploadChunk
        var session: ImageUploadSession?
        var expected: ImageUploadDecision
        var description: String { name }
    }

    static let header = Array(image.prefix(512))

    static let cases: [Case] = [
        Case(
            name: "no off → INVALID_OFFSET",
            chunk: .init(offset: nil, data: header, length: 2000),
            expected: .refuse(20)
        ),
        Case(
            name: "first chunk shorter than a header → INVALID_IMAGE_HEADER",
            chunk: .init(offset: 0, data: [0x3d, 0xb8], length: 2000),
            expected: .refuse(22)
        ),
        Case(
            name: "first chunk without len → INVALID_LENGTH",
            chunk: .init(offset: 0, data: header),
            expected: .refuse(21)
        ),
        Case(
            name: "wrong magic → INVALID_IMAGE_HEADER_MAGIC",
            chunk: .init(offset: 0, data: Array(repeating: 0, count: 64), length: 64),
            expected: .refuse(23)
        ),
        Case(
            name: "sha longer than 32 → INVALID_HASH",
            chunk: .init(offset: 0, data: header, length: 2000, sha: Array(repeating: 1, count: 33)),
            expected: .refuse(24)
        ),
        Case(
            name: "len above the slot → INVALID_IMAGE_TOO_LARGE",
            chunk: .init(offset: 0, data: header, length: 0x40001),
            expected: .refuse(30)
        ),
        Case(
            name: "upgrade with an older version → CURRENT_VERSION_IS_NEWER",
            chunk: .init(offset: 0, data: Array(TestImages.image("0.9.0").prefix(64)), length: 2000, upgrade: true),
            expected: .refuse(27)
        ),
        Case(
            name: "upgrade with the same version → CURRENT_VERSION_IS_NEWER",
            chunk: .init(offset: 0, data: Array(TestImages.image("1.0.0").prefix(64)), length: 2000, upgrade: true),
            expected: .refuse(27)
        ),
        Case(
            name: "image out of range → INVALID_SLOT",
            chunk: .init(offset: 0, data: header, length: 2000, image: 3),
            expected: .refuse(14)
        ),
        Case(
            name: "first chunk longer than len → DATA_OVERRUN",
            chunk: .init(offset: 0, data: header, length: 100),
            expected: .refuse(31)
        ),
        Case(
            name: "a new upload starts a session",
            chunk: .init(offset: 0, data: header, length: UInt64(image.count), sha: sha),
            expected: .start(ImageUploadSession(image: 0, slot: 1, length: image.count, sha: sha), erase: true)
        ),
        Case(
            name: "upgrade with a newer version starts",
            chunk: .init(offset: 0, data: header, length: UInt64(image.count), upgrade: true),
            expected: .start(ImageUploadSession(image: 0, slot: 1, length: image.count, sha: []), erase: true)
        ),
        Case(
            name: "the same sha resumes without writing",
            chunk: .init(offset: 0, data: header, length: UInt64(image.count), sha: sha),
            session: session,
            expected: .answerOffset(512)
        ),
        Case(
            name: "a different sha restarts",
            chunk: .init(offset: 0, data: header, length: UInt64(image.count), sha: Array(repeating: 1, count: 32)),
            session: session,
            expected: .start(
                ImageUploadSession(image: 0, slot: 1, length: image.count, sha: Array(repeating: 1, count: 32)),
                erase: true
            )
        ),
        Case(
            name: "no sha never resumes",
            chunk: .init(offset: 0, data: header, length: UInt64(image.count)),
            session: ImageUploadSession(image: 0, slot: 1, length: image.count, sha: [], offset: 512),
            expected: .start(ImageUploadSession(image: 0, slot: 1, length: image.count, sha: []), erase: true)
        ),
        Case(
            name: "the expected offset is written",
            chunk: .init(offset: 512, data: [1, 2, 3]),
            session: session,
            expected: .write(offset: 512)
        ),
        Case(
            name: "a wrong offset answers success with the expected one",
            chunk: .init(offset: 1024, data: [1, 2, 3]),
            session: session,
            expected: .answerOffset(512)
        ),
        Case(
            name: "a duplicate earlier chunk answers the expected offset",
            chunk: .init(offset: 100, data: [1, 2, 3]),
            session: session,
            expected: .answerOffset(512)
        ),
        Case(
            name: "a chunk with no session answers off 0",
            chunk: .init(offset: 512, data: [1, 2, 3]),
            expected: .answerOffset(0)
        ),
        Case(
            name: "a chunk past len → DATA_OVERRUN",
            chunk: .init(offset: 512, data: Array(repeating: 0, count: image.count)),
            session: session,
            expected: .refuse(31)
        ),
    ]

    @Test("Zephyr's upload decisions", arguments: cases)
    func decide(_ test: Case) {
        #expect(ImageUploadAlgorithm.decide(test.chunk, session: test.session, model: Self.model) == test.expected)
    }

    @Test("no free slot while an image is pending → NO_FREE_SLOT")
    func noFreeSlot() throws {
        var model = Self.model
        MCUbootModelTests.place(Self.image, in: &model)
        try model.setState(
            hash: try MCUbootImage(bytes: Self.image).hash,
            confirm: false,
            allowConfirmNonActive: true
        ).get()
        let decision = ImageUploadAlgorithm.decide(
            .init(offset: 0, data: Self.header, length: 2000),
            session: nil,
            model: model
        )
        #expect(decision == .refuse(9))
    }
}
