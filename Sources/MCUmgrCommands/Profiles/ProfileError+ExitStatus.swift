// Apart from ProfileStore.swift, which the fuzz package compiles on its own (Foundation and
// MCUmgrConnect only, through a link in Fuzz/Sources/FuzzURL): the exit statuses are the CLI's.
extension ProfileError: ExitStatusReporting {
    /// A profile the user named that is not there is a usage error (64); a profiles file to fix
    /// by hand is bad input (65).
    var failureReport: FailureReport {
        FailureReport(
            status: badFile ? .badInput : .usage,
            kind: badFile ? "bad_input" : "usage",
            message: message
        )
    }
}
