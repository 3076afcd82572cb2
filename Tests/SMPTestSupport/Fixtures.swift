import Foundation

/// Small helpers shared by the test targets.
public enum TestBytes {
    /// Bytes from hex text (spaces allowed); traps only on a typo in a test's own literal.
    public static func hex(_ text: String) -> [UInt8] {
        let digits = text.filter { !$0.isWhitespace }
        var out: [UInt8] = []
        var index = digits.startIndex
        while index < digits.endIndex {
            let next = digits.index(index, offsetBy: 2)
            guard let byte = UInt8(digits[index..<next], radix: 16) else {
                preconditionFailure("bad hex literal in test")
            }
            out.append(byte)
            index = next
        }
        return out
    }

    /// Lowercase hex of bytes.
    public static func hex(_ bytes: some Sequence<UInt8>) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }

    /// A deterministic pseudo-random generator (SplitMix64) so randomized tests replay by seed.
    public struct SeededGenerator: RandomNumberGenerator, Sendable {
        private var state: UInt64
        /// Creates a generator from a seed.
        public init(seed: UInt64) { state = seed }
        public mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }
}
