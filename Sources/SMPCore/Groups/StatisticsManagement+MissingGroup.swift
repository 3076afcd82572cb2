extension StatisticsManagement {
    /// Whether a refusal of ``GroupData`` means the device has no such statistics group: the
    /// group's own codes, or — Zephyr up to 4.3 names the wrong group — the Zephyr basic group's
    /// code 3, which reads as FLASH_CONFIG_QUERY_FAIL there.
    /// - Parameter refusal: the device's answer to a group read.
    public static func isMissingGroup(_ refusal: SMPDeviceError) -> Bool {
        refusal.requestGroup == .statistics
            && (refusal.matches(ReturnCode.invalidGroup)
                || refusal.matches(ReturnCode.invalidStatName)
                || refusal.status == .group(.zephyrBasic, 3))
    }

    /// The line for a group the device does not have, pointing to the list (the command line's
    /// and the web page's words).
    /// - Parameters:
    ///   - name: the group asked for.
    ///   - listCommand: how to list the groups, e.g. `mcumgr --conn sim:// stat list`.
    public static func missingGroupMessage(_ name: String, listCommand: String) -> String {
        "no statistics group '\(name)' on the device; list them with `\(listCommand)`"
    }
}
