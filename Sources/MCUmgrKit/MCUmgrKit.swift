// One dependency line and one import for an app: the client, the upgrade engine, MCUboot images
// and packages, connection URLs and the transports behind them. The modules stay separate
// for apps that want less (a BLE-only app links SMPBLETransport and MCUmgr); this only re-exports.
@_exported import MCUboot
@_exported import MCUmgr
@_exported import MCUmgrConnect
@_exported import MCUmgrDFU
@_exported import SMPBLETransport
@_exported import SMPCore
@_exported import SMPLink
@_exported import SMPSerialTransport
@_exported import SMPUDPTransport
