import SMPCore

/// One SMP command as the device tells it apart: group, command id and operation.
struct SMPCommandID: Hashable, Sendable {
    var group: SMPGroup
    var command: UInt8
    var operation: SMPOperation

    init(group: SMPGroup, command: UInt8, operation: SMPOperation) {
        self.group = group
        self.command = command
        self.operation = operation
    }

    /// The command a request header names.
    init(_ header: SMPHeader) {
        self.init(group: header.group, command: header.command, operation: header.operation)
    }
}
