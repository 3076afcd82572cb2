import SMPLink

// Not behind `canImport(CoreBluetooth)`: the list is plain data, so Linux tests check it.

/// The GATT services ``SimulatedPeripheralServer`` publishes through CoreBluetooth's peripheral
/// role, and the ones CoreBluetooth keeps for the system.
///
/// CoreBluetooth refuses an app's service whose UUID the system serves itself: `add(_:)` ends in
/// `peripheralManager(_:didAdd:error:)` with "the specified UUID is not allowed for this
/// operation", and the server's `start()` would fail with it. Generic Access and Generic Attribute
/// belong to the stack; Device Information and Battery are the Mac's own. The simulated device
/// therefore publishes SMP only (the modelled radio's GATT database, `SimulatedBLEPeripheral`'s
/// `services`, still lists Device Information and Battery, as a development kit shows them).
enum CoreBluetoothPeripheralServices {
    /// 16-bit service UUIDs an app's `CBPeripheralManager` may not publish: Generic Access (1800),
    /// Generic Attribute (1801), Device Information (180A), Battery (180F).
    static let reservedServiceUUIDs: Set<String> = ["1800", "1801", "180A", "180F"]

    /// The services published, in order: the SMP service only.
    static let published: [String] = [SMPGATT.serviceUUID]
}
