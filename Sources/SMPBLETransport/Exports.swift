// The link protocol (`GATTLink`), the UUIDs (`SMPGATT`) and `L2CAPStream` moved down to SMPLink so
// that the simulator can offer a link without this module; importing the transport still brings
// them, as it did.
@_exported import SMPLink
