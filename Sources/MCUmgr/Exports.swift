// A client is always used with a transport: whoever imports the client sees the transport
// protocols and the link error without a second import.
@_exported import SMPLink
