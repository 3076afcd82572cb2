import Foundation
import SMPBytes
import SMPHCI

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How the fake writes: whole packets, or cut so that the host reads them in pieces.
enum FakeDelivery: Sendable, CustomStringConvertible {
    case whole
    case byteByByte
    /// Cuts at random places (a seeded generator: a failure can be replayed).
    case randomSplits(seed: UInt64)

    var description: String {
        switch self {
        case .whole: "whole"
        case .byteByByte: "byte by byte"
        case .randomSplits(let seed): "random splits (seed \(seed))"
        }
    }
}

/// What the fake does with a command.
enum FakeAnswer: Sendable {
    /// Command Complete with these return parameters (the status first).
    case complete([UInt8])
    /// Command Status.
    case status(HCIStatus)
    /// These H4 bytes, whatever they are.
    case raw([UInt8])
    /// Nothing, ever.
    case silence
    /// The controller goes away.
    case close
}

/// What the peer does with an ATT request of the host.
enum FakePeerAnswer: Sendable {
    /// An Error Response with this error.
    case error(ATTErrorCode)
    /// Nothing, ever.
    case silence
    /// These ATT bytes, whatever they are.
    case raw([UInt8])
    /// The link drops (Disconnection Complete with this reason).
    case disconnect(HCIStatus)
}

/// The peripheral the fake's radio finds: it advertises its name, accepts the connection and
/// serves SMPHCI's GATT database (the SMP service), unless the test says otherwise.
struct FakePeer: Sendable {
    /// The connection's handle.
    static let handle: UInt16 = 0x0040
    var name: String
    var address = BluetoothAddress("C0:11:22:33:44:55") ?? .zero
}

/// A seeded generator (SplitMix64), so that random splits repeat.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The fake's state, under its lock: the sockets, the script, and what the host sent.
struct FakeControllerState {
    var listener: Int32
    var client: Int32 = -1
    var stopped = false
    var delivery: FakeDelivery
    var random: SplitMix64
    var peer: FakePeer?
    var answers: [HCIOpcode: FakeAnswer] = [:]
    var peerAnswers: [UInt8: FakePeerAnswer] = [:]
    /// Every packet the host sent, and how far ``FakeController/next(timeout:where:)`` has read.
    var received: [HCIPacket] = []
    var cursor = 0
    /// The host's L2CAP PDUs to the peer, reassembled, until a test takes them.
    var pdus: [L2CAPPDU] = []
    var reassembler = L2CAPReassembler()
    var gatt: GATTServer?
    /// Whether the fake frees each ACL buffer at once (Number Of Completed Packets).
    var completesPackets = true

    init(listener: Int32, delivery: FakeDelivery, peer: FakePeer?) {
        self.listener = listener
        self.delivery = delivery
        self.peer = peer
        if case .randomSplits(let seed) = delivery {
            random = SplitMix64(state: seed)
        } else {
            random = SplitMix64(state: 0)
        }
    }

    /// Writes to the host, cut as the delivery says; a pause between pieces lets the host's
    /// reader see them apart. Errors are the host's leaving, which the test sees elsewhere.
    mutating func write(_ bytes: [UInt8]) {
        guard client >= 0 else { return }
        let pieces = cut(bytes)
        for (index, piece) in pieces.enumerated() {
            if index > 0 { usleep(1000) }
            var offset = 0
            while offset < piece.count {
                let written = piece.withUnsafeBytes { raw in
                    Self.send(client, raw.baseAddress.map { $0 + offset }, piece.count - offset)
                }
                guard written > 0 else { return }
                offset += written
            }
        }
    }

    private mutating func cut(_ bytes: [UInt8]) -> [[UInt8]] {
        switch delivery {
        case .whole: return [bytes]
        case .byteByByte: return bytes.map { [$0] }
        case .randomSplits:
            var pieces: [[UInt8]] = []
            var rest = bytes[...]
            while !rest.isEmpty {
                let count = Int.random(in: 1...max(1, min(rest.count, 9)), using: &random)
                pieces.append(Array(rest.prefix(count)))
                rest = rest.dropFirst(count)
            }
            return pieces
        }
    }

    /// `send(2)` without SIGPIPE: a host that left must not end the test process.
    private static func send(_ fd: Int32, _ pointer: UnsafeRawPointer?, _ count: Int) -> Int {
        guard let pointer else { return 0 }
        #if canImport(Darwin)
            return Darwin.send(fd, pointer, count, 0)
        #else
            return Glibc.send(fd, pointer, count, Int32(MSG_NOSIGNAL))
        #endif
    }

    func event(_ event: some HCIEventWithCode) -> [UInt8] { H4Encoder.encode(.event(event.packet)) }
    func event(_ event: some HCILESubevent) -> [UInt8] { H4Encoder.encode(.event(event.packet)) }
}
