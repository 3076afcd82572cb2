import Testing

/// Every test that starts bluezoo, one at a time. Each starts a dbus-daemon, bluezoo and often a
/// Python peer; several at once would take the cores from the tests running beside them, whose
/// waits are bounded tightly (the nested suites keep their own conditions).
@Suite(.serialized) enum BlueZSuites {}
