// A DECLARATION SHIM of Apple's CoreBluetooth, for type-checking the CoreBluetooth adapters on
// Linux (scripts/typecheck-corebluetooth.sh). It is NOT Apple's SDK and nothing here runs: every
// body is `fatalError("shim")`.
//
// Scope: only the API surface the adapters use (plus a few neighbours that help catch near
// misses), written by hand from Apple's documentation (developer.apple.com/documentation/
// corebluetooth, Swift signatures). Where a declaration could not be confirmed it says so.
//
// Differences from the real SDK that matter when reading the type-checker's verdict:
// - Delegate protocols: on Apple platforms they are `@objc` protocols whose optional methods are
//   `@objc optional`, matched by Objective-C selector. Linux has no Objective-C runtime, so here
//   they are plain `protocol X: NSObjectProtocol` and every optional method gets a no-op default
//   in an extension. Consequence: a misspelled delegate method compiles here and is silently never
//   called (on Apple it compiles with at most a "nearly matches" warning and is never called
//   either). To catch that, each default here is marked `deprecated`: Swift then warns
//   "deprecated default implementation is used to satisfy …" for every optional method a class
//   does not implement, and the script compares that list with the expected one.
// - Concurrency: Apple's CoreBluetooth headers carry no Sendable annotations that we could find
//   documented, so every class here is modelled NOT Sendable (the conservative choice) and no
//   member is actor-isolated. The adapters import it `@preconcurrency`, as they must on Apple.
// - Enums imported from C (`NS_ENUM`) are non-frozen on Apple platforms; the script compiles this
//   module with `-enable-library-evolution` so an exhaustive `switch` without `@unknown default`
//   is diagnosed as it would be there.
// - `dispatch_queue_t` is spelled `DispatchQueue` (the Swift overlay's name for it).
// - Availability: the peripheral role's initializers (`CBPeripheralManager.init(delegate:queue:)`
//   and `init(delegate:queue:options:)`, `CBMutableService.init(type:primary:)`,
//   `CBMutableCharacteristic.init(type:properties:value:permissions:)`) exist on iOS, Mac Catalyst
//   and macOS only; Apple's documentation lists no tvOS, watchOS or visionOS for them (the
//   classes themselves are listed everywhere). They carry `@available(tvOS/watchOS/visionOS,
//   unavailable)` as Apple's do, which Linux ignores; built with `-D CB_SHIM_NO_PERIPHERAL_ROLE`
//   they are unavailable outright, and the script type-checks the adapters against that build
//   with `os(tvOS)` forced true, so an ungated use fails there.

import Dispatch
import Foundation

// MARK: - Enumerations and option sets

/// `CBManagerState` (macOS 10.13+): `state` of both managers.
public enum CBManagerState: Int, Sendable {
    case unknown = 0
    case resetting = 1
    case unsupported = 2
    case unauthorized = 3
    case poweredOff = 4
    case poweredOn = 5
}

/// `CBPeripheralState`.
public enum CBPeripheralState: Int, Sendable {
    case disconnected = 0
    case connecting = 1
    case connected = 2
    case disconnecting = 3
}

/// `CBCharacteristicWriteType`.
public enum CBCharacteristicWriteType: Int, Sendable {
    case withResponse = 0
    case withoutResponse = 1
}

/// `CBCharacteristicProperties` (NS_OPTIONS).
public struct CBCharacteristicProperties: OptionSet, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    public static var broadcast: CBCharacteristicProperties { .init(rawValue: 0x01) }
    public static var read: CBCharacteristicProperties { .init(rawValue: 0x02) }
    public static var writeWithoutResponse: CBCharacteristicProperties { .init(rawValue: 0x04) }
    public static var write: CBCharacteristicProperties { .init(rawValue: 0x08) }
    public static var notify: CBCharacteristicProperties { .init(rawValue: 0x10) }
    public static var indicate: CBCharacteristicProperties { .init(rawValue: 0x20) }
    public static var authenticatedSignedWrites: CBCharacteristicProperties { .init(rawValue: 0x40) }
    public static var extendedProperties: CBCharacteristicProperties { .init(rawValue: 0x80) }
}

/// `CBAttributePermissions` (NS_OPTIONS).
public struct CBAttributePermissions: OptionSet, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    public static var readable: CBAttributePermissions { .init(rawValue: 0x01) }
    public static var writeable: CBAttributePermissions { .init(rawValue: 0x02) }
    public static var readEncryptionRequired: CBAttributePermissions { .init(rawValue: 0x04) }
    public static var writeEncryptionRequired: CBAttributePermissions { .init(rawValue: 0x08) }
}

/// `CBATTError`: in Swift a struct wrapping the `NS_ERROR_ENUM` `CBATTError.Code`, which is what
/// `CBPeripheralManager.respond(to:withResult:)` takes.
public struct CBATTError: Error {
    /// ATT error codes (Bluetooth 4.0, Vol 3, Part F, 3.4.1.1).
    public enum Code: Int, Sendable {
        case success = 0
        case invalidHandle = 1
        case readNotPermitted = 2
        case writeNotPermitted = 3
        case invalidPdu = 4
        case insufficientAuthentication = 5
        case requestNotSupported = 6
        case invalidOffset = 7
        case insufficientAuthorization = 8
        case prepareQueueFull = 9
        case attributeNotFound = 10
        case attributeNotLong = 11
        case insufficientEncryptionKeySize = 12
        case invalidAttributeValueLength = 13
        case unlikelyError = 14
        case insufficientEncryption = 15
        case unsupportedGroupType = 16
        case insufficientResources = 17
    }
    public var code: Code { fatalError("shim") }
}

/// `CBL2CAPPSM`: `typealias CBL2CAPPSM = UInt16`.
public typealias CBL2CAPPSM = UInt16

// MARK: - Advertisement data keys (`let …: String` globals)

public let CBAdvertisementDataLocalNameKey: String = "kCBAdvDataLocalName"
public let CBAdvertisementDataServiceUUIDsKey: String = "kCBAdvDataServiceUUIDs"

// MARK: - Identifiers and attributes

/// `CBUUID`: a Bluetooth UUID. NSObject equality (`isEqual:`) compares the UUIDs.
open class CBUUID: NSObject, NSCopying {
    /// `convenience init(string theString: String)`
    public convenience init(string theString: String) { fatalError("shim") }
    /// `convenience init(nsuuid theUUID: UUID)`
    public convenience init(nsuuid theUUID: UUID) { fatalError("shim") }
    /// `var uuidString: String { get }`
    open var uuidString: String { fatalError("shim") }
    /// `var data: Data { get }`
    open var data: Data { fatalError("shim") }
    public func copy(with zone: NSZone? = nil) -> Any { fatalError("shim") }
}

/// `CBPeer`: a remote device (`CBPeripheral`, `CBCentral`). `init()` is unavailable.
open class CBPeer: NSObject, NSCopying {
    @available(*, unavailable)
    public override init() { fatalError("shim") }
    init(shim: ()) { super.init() }
    /// `var identifier: UUID { get }`
    open var identifier: UUID { fatalError("shim") }
    public func copy(with zone: NSZone? = nil) -> Any { fatalError("shim") }
}

/// `CBAttribute`: base of services, characteristics, descriptors. `init()` is unavailable.
open class CBAttribute: NSObject {
    @available(*, unavailable)
    public override init() { fatalError("shim") }
    init(shim: ()) { super.init() }
    /// `var uuid: CBUUID { get }`
    open var uuid: CBUUID { fatalError("shim") }
}

/// `CBService`: a remote peripheral's service.
open class CBService: CBAttribute {
    /// `weak var peripheral: CBPeripheral? { get }`
    open weak var peripheral: CBPeripheral? { fatalError("shim") }
    /// `var isPrimary: Bool { get }`
    open var isPrimary: Bool { fatalError("shim") }
    /// `var characteristics: [CBCharacteristic]? { get }`
    open var characteristics: [CBCharacteristic]? { fatalError("shim") }
    /// `var includedServices: [CBService]? { get }`
    open var includedServices: [CBService]? { fatalError("shim") }
}

/// `CBMutableService`: a local service to publish with `CBPeripheralManager.add(_:)`.
open class CBMutableService: CBService {
    /// `init(type UUID: CBUUID, primary isPrimary: Bool)` (iOS 6, macOS 10.9; not tvOS, watchOS,
    /// visionOS)
    #if CB_SHIM_NO_PERIPHERAL_ROLE
        @available(*, unavailable, message: "CoreBluetooth shim: not on tvOS, watchOS or visionOS")
    #endif
    @available(tvOS, unavailable)
    @available(watchOS, unavailable)
    @available(visionOS, unavailable)
    public init(type UUID: CBUUID, primary isPrimary: Bool) { super.init(shim: ()) }
    /// `var characteristics: [CBCharacteristic]? { get set }`
    open override var characteristics: [CBCharacteristic]? {
        get { fatalError("shim") }
        set { fatalError("shim") }
    }
    /// `var includedServices: [CBService]? { get set }`
    open override var includedServices: [CBService]? {
        get { fatalError("shim") }
        set { fatalError("shim") }
    }
}

/// `CBCharacteristic`: a remote peripheral's characteristic.
open class CBCharacteristic: CBAttribute {
    /// `weak var service: CBService? { get }`
    open weak var service: CBService? { fatalError("shim") }
    /// `var properties: CBCharacteristicProperties { get }`
    open var properties: CBCharacteristicProperties { fatalError("shim") }
    /// `var value: Data? { get }`
    open var value: Data? { fatalError("shim") }
    /// `var isNotifying: Bool { get }`
    open var isNotifying: Bool { fatalError("shim") }
}

/// `CBMutableCharacteristic`: a local characteristic. A non-nil `value` is cached and makes the
/// characteristic read-only; `nil` makes it dynamic (requests reach the delegate).
open class CBMutableCharacteristic: CBCharacteristic {
    /// `init(type UUID: CBUUID, properties: CBCharacteristicProperties, value: Data?, permissions: CBAttributePermissions)`
    /// (iOS 6, macOS 10.9; not tvOS, watchOS, visionOS)
    #if CB_SHIM_NO_PERIPHERAL_ROLE
        @available(*, unavailable, message: "CoreBluetooth shim: not on tvOS, watchOS or visionOS")
    #endif
    @available(tvOS, unavailable)
    @available(watchOS, unavailable)
    @available(visionOS, unavailable)
    public init(
        type UUID: CBUUID,
        properties: CBCharacteristicProperties,
        value: Data?,
        permissions: CBAttributePermissions
    ) { super.init(shim: ()) }
    /// `var permissions: CBAttributePermissions { get set }`
    open var permissions: CBAttributePermissions {
        get { fatalError("shim") }
        set { fatalError("shim") }
    }
    /// `var properties: CBCharacteristicProperties { get set }`
    open override var properties: CBCharacteristicProperties {
        get { fatalError("shim") }
        set { fatalError("shim") }
    }
    /// `var value: Data? { get set }`
    open override var value: Data? {
        get { fatalError("shim") }
        set { fatalError("shim") }
    }
    /// `var subscribedCentrals: [CBCentral]? { get }`
    open var subscribedCentrals: [CBCentral]? { fatalError("shim") }
}

// MARK: - Managers

/// `CBManager`: base of the central and peripheral managers.
open class CBManager: NSObject {
    /// `var state: CBManagerState { get }`
    open var state: CBManagerState { fatalError("shim") }
}

/// `CBCentralManager`.
open class CBCentralManager: CBManager {
    /// `weak var delegate: (any CBCentralManagerDelegate)? { get set }`
    open weak var delegate: (any CBCentralManagerDelegate)? {
        get { fatalError("shim") }
        set { fatalError("shim") }
    }
    /// `var isScanning: Bool { get }`
    open var isScanning: Bool { fatalError("shim") }
    /// `convenience init()`
    public convenience override init() { fatalError("shim") }
    /// `convenience init(delegate: (any CBCentralManagerDelegate)?, queue: dispatch_queue_t?)`
    public convenience init(delegate: (any CBCentralManagerDelegate)?, queue: DispatchQueue?) { fatalError("shim") }
    /// `init(delegate: (any CBCentralManagerDelegate)?, queue: dispatch_queue_t?, options: [String : Any]? = nil)`
    public init(delegate: (any CBCentralManagerDelegate)?, queue: DispatchQueue?, options: [String: Any]? = nil) {
        super.init()
    }
    /// `func retrievePeripherals(withIdentifiers identifiers: [UUID]) -> [CBPeripheral]`
    open func retrievePeripherals(withIdentifiers identifiers: [UUID]) -> [CBPeripheral] { fatalError("shim") }
    /// `func retrieveConnectedPeripherals(withServices serviceUUIDs: [CBUUID]) -> [CBPeripheral]`
    open func retrieveConnectedPeripherals(withServices serviceUUIDs: [CBUUID]) -> [CBPeripheral] {
        fatalError("shim")
    }
    /// `func scanForPeripherals(withServices serviceUUIDs: [CBUUID]?, options: [String : Any]? = nil)`
    open func scanForPeripherals(withServices serviceUUIDs: [CBUUID]?, options: [String: Any]? = nil) {
        fatalError("shim")
    }
    /// `func stopScan()`
    open func stopScan() { fatalError("shim") }
    /// `func connect(_ peripheral: CBPeripheral, options: [String : Any]? = nil)`
    open func connect(_ peripheral: CBPeripheral, options: [String: Any]? = nil) { fatalError("shim") }
    /// `func cancelPeripheralConnection(_ peripheral: CBPeripheral)`
    open func cancelPeripheralConnection(_ peripheral: CBPeripheral) { fatalError("shim") }
}

/// `CBCentralManagerDelegate`. Apple: `@objc protocol … : NSObjectProtocol`, only
/// `centralManagerDidUpdateState(_:)` required; the rest `@objc optional` (defaults below).
public protocol CBCentralManagerDelegate: NSObjectProtocol {
    func centralManagerDidUpdateState(_ central: CBCentralManager)
    func centralManager(_ central: CBCentralManager, willRestoreState dict: [String: Any])
    func centralManager(
        _ central: CBCentralManager,
        didDiscover peripheral: CBPeripheral,
        advertisementData: [String: Any],
        rssi RSSI: NSNumber
    )
    func centralManager(_ central: CBCentralManager, didConnect peripheral: CBPeripheral)
    func centralManager(_ central: CBCentralManager, didFailToConnect peripheral: CBPeripheral, error: (any Error)?)
    func centralManager(
        _ central: CBCentralManager,
        didDisconnectPeripheral peripheral: CBPeripheral,
        error: (any Error)?
    )
}

extension CBCentralManagerDelegate {
    @available(*, deprecated, message: "CoreBluetooth shim: optional delegate method not implemented")
    public func centralManager(_ central: CBCentralManager, willRestoreState dict: [String: Any]) {}
    @available(*, deprecated, message: "CoreBluetooth shim: optional delegate method not implemented")
    public func centralManager(
        _ central: CBCentralManager,
        didDiscover peripheral: CBPeripheral,
        advertisementData: [String: Any],
        rssi RSSI: NSNumber
    ) {}
    @available(*, deprecated, message: "CoreBluetooth shim: optional delegate method not implemented")
    public func centralManager(_ central: CBCentralManager, didConnect peripheral: CBPeripheral) {}
    @available(*, deprecated, message: "CoreBluetooth shim: optional delegate method not implemented")
    public func centralManager(
        _ central: CBCentralManager,
        didFailToConnect peripheral: CBPeripheral,
        error: (any Error)?
    ) {}
    @available(*, deprecated, message: "CoreBluetooth shim: optional delegate method not implemented")
    public func centralManager(
        _ central: CBCentralManager,
        didDisconnectPeripheral peripheral: CBPeripheral,
        error: (any Error)?
    ) {}
}

// MARK: - Peripheral (remote, seen from the central)

/// `CBPeripheral`.
open class CBPeripheral: CBPeer {
    /// `weak var delegate: (any CBPeripheralDelegate)? { get set }`
    open weak var delegate: (any CBPeripheralDelegate)? {
        get { fatalError("shim") }
        set { fatalError("shim") }
    }
    /// `var name: String? { get }`
    open var name: String? { fatalError("shim") }
    /// `var state: CBPeripheralState { get }`
    open var state: CBPeripheralState { fatalError("shim") }
    /// `var services: [CBService]? { get }`
    open var services: [CBService]? { fatalError("shim") }
    /// `var canSendWriteWithoutResponse: Bool { get }` (macOS 10.13+)
    open var canSendWriteWithoutResponse: Bool { fatalError("shim") }
    /// `func discoverServices(_ serviceUUIDs: [CBUUID]?)`
    open func discoverServices(_ serviceUUIDs: [CBUUID]?) { fatalError("shim") }
    /// `func discoverCharacteristics(_ characteristicUUIDs: [CBUUID]?, for service: CBService)`
    open func discoverCharacteristics(_ characteristicUUIDs: [CBUUID]?, for service: CBService) {
        fatalError("shim")
    }
    /// `func readValue(for characteristic: CBCharacteristic)`
    open func readValue(for characteristic: CBCharacteristic) { fatalError("shim") }
    /// `func writeValue(_ data: Data, for characteristic: CBCharacteristic, type: CBCharacteristicWriteType)`
    open func writeValue(_ data: Data, for characteristic: CBCharacteristic, type: CBCharacteristicWriteType) {
        fatalError("shim")
    }
    /// `func setNotifyValue(_ enabled: Bool, for characteristic: CBCharacteristic)`
    open func setNotifyValue(_ enabled: Bool, for characteristic: CBCharacteristic) { fatalError("shim") }
    /// `func maximumWriteValueLength(for type: CBCharacteristicWriteType) -> Int` (macOS 10.12+)
    open func maximumWriteValueLength(for type: CBCharacteristicWriteType) -> Int { fatalError("shim") }
    /// `func openL2CAPChannel(_ PSM: CBL2CAPPSM)` (macOS 10.14+)
    open func openL2CAPChannel(_ PSM: CBL2CAPPSM) { fatalError("shim") }
}

/// `CBPeripheralDelegate`. Apple: `@objc protocol … : NSObjectProtocol`, every method
/// `@objc optional` (defaults below).
public protocol CBPeripheralDelegate: NSObjectProtocol {
    func peripheralDidUpdateName(_ peripheral: CBPeripheral)
    func peripheral(_ peripheral: CBPeripheral, didModifyServices invalidatedServices: [CBService])
    func peripheral(_ peripheral: CBPeripheral, didDiscoverServices error: (any Error)?)
    func peripheral(_ peripheral: CBPeripheral, didDiscoverCharacteristicsFor service: CBService, error: (any Error)?)
    func peripheral(_ peripheral: CBPeripheral, didUpdateValueFor characteristic: CBCharacteristic, error: (any Error)?)
    func peripheral(_ peripheral: CBPeripheral, didWriteValueFor characteristic: CBCharacteristic, error: (any Error)?)
    func peripheral(
        _ peripheral: CBPeripheral,
        didUpdateNotificationStateFor characteristic: CBCharacteristic,
        error: (any Error)?
    )
    func peripheralIsReady(toSendWriteWithoutResponse peripheral: CBPeripheral)
    func peripheral(_ peripheral: CBPeripheral, didOpen channel: CBL2CAPChannel?, error: (any Error)?)
}

extension CBPeripheralDelegate {
    @available(*, deprecated, message: "CoreBluetooth shim: optional delegate method not implemented")
    public func peripheralDidUpdateName(_ peripheral: CBPeripheral) {}
    @available(*, deprecated, message: "CoreBluetooth shim: optional delegate method not implemented")
    public func peripheral(_ peripheral: CBPeripheral, didModifyServices invalidatedServices: [CBService]) {}
    @available(*, deprecated, message: "CoreBluetooth shim: optional delegate method not implemented")
    public func peripheral(_ peripheral: CBPeripheral, didDiscoverServices error: (any Error)?) {}
    @available(*, deprecated, message: "CoreBluetooth shim: optional delegate method not implemented")
    public func peripheral(
        _ peripheral: CBPeripheral,
        didDiscoverCharacteristicsFor service: CBService,
        error: (any Error)?
    ) {}
    @available(*, deprecated, message: "CoreBluetooth shim: optional delegate method not implemented")
    public func peripheral(
        _ peripheral: CBPeripheral,
        didUpdateValueFor characteristic: CBCharacteristic,
        error: (any Error)?
    ) {}
    @available(*, deprecated, message: "CoreBluetooth shim: optional delegate method not implemented")
    public func peripheral(
        _ peripheral: CBPeripheral,
        didWriteValueFor characteristic: CBCharacteristic,
        error: (any Error)?
    ) {}
    @available(*, deprecated, message: "CoreBluetooth shim: optional delegate method not implemented")
    public func peripheral(
        _ peripheral: CBPeripheral,
        didUpdateNotificationStateFor characteristic: CBCharacteristic,
        error: (any Error)?
    ) {}
    @available(*, deprecated, message: "CoreBluetooth shim: optional delegate method not implemented")
    public func peripheralIsReady(toSendWriteWithoutResponse peripheral: CBPeripheral) {}
    @available(*, deprecated, message: "CoreBluetooth shim: optional delegate method not implemented")
    public func peripheral(_ peripheral: CBPeripheral, didOpen channel: CBL2CAPChannel?, error: (any Error)?) {}
}

/// `CBL2CAPChannel`: a live L2CAP channel; its streams carry the bytes.
open class CBL2CAPChannel: NSObject {
    /// `var peer: CBPeer! { get }`
    open var peer: CBPeer! { fatalError("shim") }
    /// `var inputStream: InputStream! { get }`
    open var inputStream: InputStream! { fatalError("shim") }
    /// `var outputStream: OutputStream! { get }`
    open var outputStream: OutputStream! { fatalError("shim") }
    /// `var psm: CBL2CAPPSM { get }`
    open var psm: CBL2CAPPSM { fatalError("shim") }
}

// MARK: - Peripheral role (local GATT server)

/// `CBCentral`: a remote central connected to the local peripheral manager.
open class CBCentral: CBPeer {
    /// `var maximumUpdateValueLength: Int { get }`
    open var maximumUpdateValueLength: Int { fatalError("shim") }
}

/// `CBATTRequest`: a read or write request from a central. `init()` is unavailable.
open class CBATTRequest: NSObject {
    @available(*, unavailable)
    public override init() { fatalError("shim") }
    /// `var central: CBCentral { get }`
    open var central: CBCentral { fatalError("shim") }
    /// `var characteristic: CBCharacteristic { get }`
    open var characteristic: CBCharacteristic { fatalError("shim") }
    /// `var offset: Int { get }`
    open var offset: Int { fatalError("shim") }
    /// `var value: Data? { get set }`
    open var value: Data? {
        get { fatalError("shim") }
        set { fatalError("shim") }
    }
}

/// `CBPeripheralManager`.
open class CBPeripheralManager: CBManager {
    /// `weak var delegate: (any CBPeripheralManagerDelegate)? { get set }`
    open weak var delegate: (any CBPeripheralManagerDelegate)? {
        get { fatalError("shim") }
        set { fatalError("shim") }
    }
    /// `var isAdvertising: Bool { get }`
    open var isAdvertising: Bool { fatalError("shim") }
    /// `convenience init()`
    public convenience override init() { fatalError("shim") }
    /// `convenience init(delegate: (any CBPeripheralManagerDelegate)?, queue: dispatch_queue_t?)`
    /// (iOS 6, macOS 10.9; not tvOS, watchOS, visionOS)
    #if CB_SHIM_NO_PERIPHERAL_ROLE
        @available(*, unavailable, message: "CoreBluetooth shim: not on tvOS, watchOS or visionOS")
    #endif
    @available(tvOS, unavailable)
    @available(watchOS, unavailable)
    @available(visionOS, unavailable)
    public convenience init(delegate: (any CBPeripheralManagerDelegate)?, queue: DispatchQueue?) {
        fatalError("shim")
    }
    /// `init(delegate: (any CBPeripheralManagerDelegate)?, queue: dispatch_queue_t?, options: [String : Any]? = nil)`
    /// (iOS 7, macOS 10.9; not tvOS, watchOS, visionOS)
    #if CB_SHIM_NO_PERIPHERAL_ROLE
        @available(*, unavailable, message: "CoreBluetooth shim: not on tvOS, watchOS or visionOS")
    #endif
    @available(tvOS, unavailable)
    @available(watchOS, unavailable)
    @available(visionOS, unavailable)
    public init(delegate: (any CBPeripheralManagerDelegate)?, queue: DispatchQueue?, options: [String: Any]? = nil) {
        super.init()
    }
    /// `func add(_ service: CBMutableService)`
    open func add(_ service: CBMutableService) { fatalError("shim") }
    /// `func remove(_ service: CBMutableService)`
    open func remove(_ service: CBMutableService) { fatalError("shim") }
    /// `func removeAllServices()`
    open func removeAllServices() { fatalError("shim") }
    /// `func startAdvertising(_ advertisementData: [String : Any]?)`
    open func startAdvertising(_ advertisementData: [String: Any]?) { fatalError("shim") }
    /// `func stopAdvertising()`
    open func stopAdvertising() { fatalError("shim") }
    /// `func updateValue(_ value: Data, for characteristic: CBMutableCharacteristic, onSubscribedCentrals centrals: [CBCentral]?) -> Bool`
    open func updateValue(
        _ value: Data,
        for characteristic: CBMutableCharacteristic,
        onSubscribedCentrals centrals: [CBCentral]?
    ) -> Bool { fatalError("shim") }
    /// `func respond(to request: CBATTRequest, withResult result: CBATTError.Code)`
    open func respond(to request: CBATTRequest, withResult result: CBATTError.Code) { fatalError("shim") }
    /// `func publishL2CAPChannel(withEncryption encryptionRequired: Bool)`
    open func publishL2CAPChannel(withEncryption encryptionRequired: Bool) { fatalError("shim") }
    /// `func unpublishL2CAPChannel(_ PSM: CBL2CAPPSM)`
    open func unpublishL2CAPChannel(_ PSM: CBL2CAPPSM) { fatalError("shim") }
}

/// `CBPeripheralManagerDelegate`. Apple: `@objc protocol … : NSObjectProtocol`, only
/// `peripheralManagerDidUpdateState(_:)` required; the rest `@objc optional` (defaults below).
public protocol CBPeripheralManagerDelegate: NSObjectProtocol {
    func peripheralManagerDidUpdateState(_ peripheral: CBPeripheralManager)
    func peripheralManager(_ peripheral: CBPeripheralManager, willRestoreState dict: [String: Any])
    func peripheralManagerDidStartAdvertising(_ peripheral: CBPeripheralManager, error: (any Error)?)
    func peripheralManager(_ peripheral: CBPeripheralManager, didAdd service: CBService, error: (any Error)?)
    func peripheralManager(
        _ peripheral: CBPeripheralManager,
        central: CBCentral,
        didSubscribeTo characteristic: CBCharacteristic
    )
    func peripheralManager(
        _ peripheral: CBPeripheralManager,
        central: CBCentral,
        didUnsubscribeFrom characteristic: CBCharacteristic
    )
    func peripheralManager(_ peripheral: CBPeripheralManager, didReceiveRead request: CBATTRequest)
    func peripheralManager(_ peripheral: CBPeripheralManager, didReceiveWrite requests: [CBATTRequest])
    func peripheralManagerIsReady(toUpdateSubscribers peripheral: CBPeripheralManager)
    func peripheralManager(
        _ peripheral: CBPeripheralManager,
        didPublishL2CAPChannel PSM: CBL2CAPPSM,
        error: (any Error)?
    )
    func peripheralManager(
        _ peripheral: CBPeripheralManager,
        didUnpublishL2CAPChannel PSM: CBL2CAPPSM,
        error: (any Error)?
    )
    func peripheralManager(_ peripheral: CBPeripheralManager, didOpen channel: CBL2CAPChannel?, error: (any Error)?)
}

extension CBPeripheralManagerDelegate {
    @available(*, deprecated, message: "CoreBluetooth shim: optional delegate method not implemented")
    public func peripheralManager(_ peripheral: CBPeripheralManager, willRestoreState dict: [String: Any]) {}
    @available(*, deprecated, message: "CoreBluetooth shim: optional delegate method not implemented")
    public func peripheralManagerDidStartAdvertising(_ peripheral: CBPeripheralManager, error: (any Error)?) {}
    @available(*, deprecated, message: "CoreBluetooth shim: optional delegate method not implemented")
    public func peripheralManager(_ peripheral: CBPeripheralManager, didAdd service: CBService, error: (any Error)?) {}
    @available(*, deprecated, message: "CoreBluetooth shim: optional delegate method not implemented")
    public func peripheralManager(
        _ peripheral: CBPeripheralManager,
        central: CBCentral,
        didSubscribeTo characteristic: CBCharacteristic
    ) {}
    @available(*, deprecated, message: "CoreBluetooth shim: optional delegate method not implemented")
    public func peripheralManager(
        _ peripheral: CBPeripheralManager,
        central: CBCentral,
        didUnsubscribeFrom characteristic: CBCharacteristic
    ) {}
    @available(*, deprecated, message: "CoreBluetooth shim: optional delegate method not implemented")
    public func peripheralManager(_ peripheral: CBPeripheralManager, didReceiveRead request: CBATTRequest) {}
    @available(*, deprecated, message: "CoreBluetooth shim: optional delegate method not implemented")
    public func peripheralManager(_ peripheral: CBPeripheralManager, didReceiveWrite requests: [CBATTRequest]) {}
    @available(*, deprecated, message: "CoreBluetooth shim: optional delegate method not implemented")
    public func peripheralManagerIsReady(toUpdateSubscribers peripheral: CBPeripheralManager) {}
    @available(*, deprecated, message: "CoreBluetooth shim: optional delegate method not implemented")
    public func peripheralManager(
        _ peripheral: CBPeripheralManager,
        didPublishL2CAPChannel PSM: CBL2CAPPSM,
        error: (any Error)?
    ) {}
    @available(*, deprecated, message: "CoreBluetooth shim: optional delegate method not implemented")
    public func peripheralManager(
        _ peripheral: CBPeripheralManager,
        didUnpublishL2CAPChannel PSM: CBL2CAPPSM,
        error: (any Error)?
    ) {}
    @available(*, deprecated, message: "CoreBluetooth shim: optional delegate method not implemented")
    public func peripheralManager(
        _ peripheral: CBPeripheralManager,
        didOpen channel: CBL2CAPChannel?,
        error: (any Error)?
    ) {}
}
