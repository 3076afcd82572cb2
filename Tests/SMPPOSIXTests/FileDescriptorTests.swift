import Foundation
import SMPTestSupport
import Testing

@testable import SMPPOSIX

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

@Suite("FileDescriptor")
struct FileDescriptorTests {
    /// A pipe: the read end wrapped, the write end returned raw (the test closes it).
    static func pipeEnds() throws -> (read: FileDescriptor, write: Int32) {
        var ends: [Int32] = [-1, -1]
        try #require(pipe(&ends) == 0)
        return (FileDescriptor(ends[0]), ends[1])
    }

    @Test("a close during an operation waits for it: the number stays open until the operation ends")
    func closeDuringAnOperation() throws {
        let (descriptor, write) = try Self.pipeEnds()
        defer { _ = systemClose(write) }
        let stillOpen = descriptor.withDescriptor { fd -> Bool in
            descriptor.close()
            // Closed for new operations, but this one's number is still ours.
            return descriptor.closed && fcntl(fd, F_GETFD) != -1
        }
        #expect(stillOpen == true)
        #expect(descriptor.withDescriptor { _ in true } == nil)
        #expect(descriptor.acquire() == nil)
    }

    @Test("a reader waiting with no deadline returns when another thread closes the descriptor")
    func closeWakesAWaitingReader() async throws {
        let (descriptor, write) = try Self.pipeEnds()
        defer { _ = systemClose(write) }
        let reader = OnThread { descriptor.waitReadable(timeout: nil) }
        // The reader is in its poll slices now or soon; either way the close ends its wait.
        descriptor.close()
        let readable = try await reader.value
        #expect(!readable)
    }

    @Test("bytes written to the pipe are read; after the close a read returns nothing")
    func readThenClose() throws {
        let (descriptor, write) = try Self.pipeEnds()
        defer { _ = systemClose(write) }
        var bytes: [UInt8] = [1, 2, 3]
        #expect(systemWrite(write, &bytes, 3) == 3)
        #expect(try descriptor.read(maximumCount: 16, timeout: .seconds(3600), subject: "pipe") == [1, 2, 3])
        descriptor.close()
        #expect(try descriptor.read(maximumCount: 16, timeout: .seconds(3600), subject: "pipe") == [])
    }
}
