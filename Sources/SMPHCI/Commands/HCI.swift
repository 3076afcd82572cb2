/// The HCI commands and events this LE host speaks, by their names in the Core Specification
/// (Vol 4, Part E, section 7): `HCI.Reset`, `HCI.LECreateConnection`, `HCI.CommandComplete`.
public enum HCI {}
