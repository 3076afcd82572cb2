// Part of the CoreBluetooth DECLARATION SHIM (see CoreBluetooth.swift), kept in its own file
// because it is not CoreBluetooth: the few Darwin-only Core Foundation declarations the L2CAP
// adapter uses, which swift-corelibs-foundation on Linux does not export.
//
// On Apple platforms these come from CoreFoundation through `import Foundation`; here they are
// compiled into the shim module so the adapter's imports (`CoreBluetooth`, `Foundation`) resolve
// them. Nothing here runs.
//
// - `CFReadStream` / `CFWriteStream` are toll-free bridged with `InputStream` / `OutputStream`
//   (`CF_BRIDGED_MUTABLE_TYPE`), so Swift allows `inputStream as CFReadStream`. A typealias is the
//   closest Linux model of that `as` conversion (it also accepts it trivially, so this check cannot
//   tell a bridged cast from a wrong one between these two pairs).
// - Signatures from Apple's documentation:
//   `func CFReadStreamSetDispatchQueue(_ stream: CFReadStream!, _ q: dispatch_queue_t!)`
//   `func CFWriteStreamSetDispatchQueue(_ stream: CFWriteStream!, _ q: dispatch_queue_t!)`

import Dispatch
import Foundation

public typealias CFReadStream = InputStream
public typealias CFWriteStream = OutputStream

public func CFReadStreamSetDispatchQueue(_ stream: CFReadStream!, _ q: DispatchQueue!) { fatalError("shim") }
public func CFWriteStreamSetDispatchQueue(_ stream: CFWriteStream!, _ q: DispatchQueue!) { fatalError("shim") }
