import SMPLink
import Testing

@testable import SMPSimulator

/// `mcumgr simulator --ble` on macOS: CoreBluetooth refuses an app's service with a UUID the
/// system serves ("UUID not allowed"), and `start()` would then fail.
@Suite struct CoreBluetoothPeripheralServicesTests {
    /// Only the SMP service is published; none of the reserved ones.
    @Test func publishesSMPAndNothingReserved() {
        #expect(CoreBluetoothPeripheralServices.published == [SMPGATT.serviceUUID])
        for uuid in CoreBluetoothPeripheralServices.published {
            #expect(!CoreBluetoothPeripheralServices.reservedServiceUUIDs.contains(uuid.uppercased()))
        }
    }

    /// Device Information and Battery, which the simulated device offers elsewhere, are reserved.
    @Test func deviceInformationAndBatteryAreReserved() {
        #expect(CoreBluetoothPeripheralServices.reservedServiceUUIDs.contains(SMPGATT.deviceInformationServiceUUID))
        #expect(CoreBluetoothPeripheralServices.reservedServiceUUIDs.contains(SMPGATT.batteryServiceUUID))
    }
}
