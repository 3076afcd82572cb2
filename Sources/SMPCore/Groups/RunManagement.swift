import Foundation

/// Run management, group 7: list and start the firmware's built-in test suites. Apache Mynewt
/// only.
///
/// Spec: `smp-protocol.md` §2 (Mynewt command ids; the Zephyr doc table calls group 7 "test
/// crashing application", the C enum and Mynewt call it run) with the keys of Mynewt `run` as
/// sent by `newtmgr` (`nmxact/nmp/run.go`). Mynewt answers with v1 envelopes only.
public enum RunManagement: SMPManagementGroup {
    /// Group 7.
    public static let group = SMPGroup.run

    /// No group table: only the two codes every group shares.
    public static let returnCodeNames = ["OK", "UNKNOWN"]

    /// This group's return code (never sent in a v2 `err` by Mynewt).
    public typealias ReturnCode = SMPGroupReturnCode<RunManagement>

    /// Command 0, test: run one test suite, or all of them.
    public struct Test: SMPWriteRequest, Hashable {
        /// Never sent again automatically: the tests run again.
        public var isIdempotent: Bool { false }

        public static var group: SMPGroup { .run }
        public static var command: UInt8 { 0 }

        /// Name of the suite, or `all` (wire key `testname`, required).
        public var testName: String
        /// Text the device writes to its log with the results, to find them again (wire key
        /// `token`, optional).
        public var token: String?

        /// Creates the request.
        /// - Parameters:
        ///   - testName: the suite, or `all`.
        ///   - token: the marker for the results.
        public init(testName: String, token: String? = nil) {
            self.testName = testName
            self.token = token
        }

        enum CodingKeys: String, CodingKey {
            case testName = "testname"
            case token
        }

        /// Success carries no fields.
        public typealias Response = SMPEmptyResponse
    }

    /// Command 1, list: the names of the registered test suites.
    public struct List: SMPReadRequest, Hashable {
        public static var group: SMPGroup { .run }
        public static var command: UInt8 { 1 }

        /// Creates the request (an empty map).
        public init() {}

        /// The suite names.
        public struct Response: Codable, Sendable, Hashable {
            /// Test suite names (wire key `run_list`, always present).
            public var testNames: [String]

            /// Creates a response.
            public init(testNames: [String]) { self.testNames = testNames }

            enum CodingKeys: String, CodingKey { case testNames = "run_list" }
        }
    }
}

extension SMPGroupReturnCode where Group == RunManagement {
    /// 0 OK: success.
    public static var ok: Self { Self(rawValue: 0) }
    /// 1 UNKNOWN: unknown error.
    public static var unknown: Self { Self(rawValue: 1) }
}
