extension ShellManagement.Execute.Response {
    /// The line for a shell command that ran and returned non-zero, e.g.
    /// `'kernel' returned 1 on the device`; `nil` when it returned 0 (or the device sent no code).
    /// Long commands are shortened to 60 characters.
    /// - Parameter command: the command line that ran.
    public func failureLine(command: String) -> String? {
        guard let returnCode, returnCode != 0 else { return nil }
        let shown = command.count > 60 ? command.prefix(57) + "..." : Substring(command)
        return "'\(shown)' returned \(returnCode) on the device"
    }
}
