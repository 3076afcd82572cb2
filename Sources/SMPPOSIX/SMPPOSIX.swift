// SMPPOSIX: small wrappers over the C library for the transports and the simulator.
//
// - `UDPSocket`: bound or connected UDP (IPv4/IPv6, names through getaddrinfo), receive with a
//   timeout that also returns the sender.
// - `SerialPort`: a tty in raw mode at a baud rate, reads with a timeout through poll.
// - `PseudoTerminal`: a pty pair for serving a simulated serial device.
// - `SystemCallError`: the one error type, carrying the call, its subject and errno.
//
// Every blocking wait polls in short slices, so closing an object from another thread makes a
// blocked reader return promptly; no API here starts a thread.
