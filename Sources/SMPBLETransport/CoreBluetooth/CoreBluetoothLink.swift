#if canImport(CoreBluetooth)
    @preconcurrency import CoreBluetooth
    import Foundation
    import SMPLink

    /// One connection to the SMP characteristic through CoreBluetooth.
    ///
    /// Safe because the mutable state (`characteristic`, `pacing`, `waiters`, `isOpen`) is
    /// touched only on the central's queue, where CoreBluetooth also calls back (the conformance
    /// is unchecked: that confinement is the central's queue discipline, not the compiler's).
    final class CoreBluetoothLink: GATTLink, @unchecked Sendable {
        let events: AsyncStream<GATTLinkEvent>
        private let continuation: AsyncStream<GATTLinkEvent>.Continuation
        private let central: CoreBluetoothCentral
        /// The peripheral under the link (the central compares it by identity).
        let peripheral: CBPeripheral
        /// The SMP characteristic; `nil` while the central rediscovers it after the peripheral's
        /// services changed (writes wait meanwhile).
        private var characteristic: CBCharacteristic?
        /// Writes even when no ready callback comes (see ``WriteWithoutResponsePacing``).
        private var pacing = WriteWithoutResponsePacing()
        private var waiters: [Int: CheckedContinuation<Void, any Error>] = [:]
        private var nextWaiter = 0
        private var isOpen = true

        init(central: CoreBluetoothCentral, peripheral: CBPeripheral, characteristic: CBCharacteristic) {
            self.central = central
            self.peripheral = peripheral
            self.characteristic = characteristic
            (events, continuation) = AsyncStream.makeStream(of: GATTLinkEvent.self)
        }

        /// Read from CoreBluetooth each time: it is only right once connected, and can grow.
        var maximumWriteLength: Int {
            central.queue.sync { peripheral.maximumWriteValueLength(for: .withoutResponse) }
        }

        func writeWithoutResponse(_ value: [UInt8]) async throws -> Bool {
            try central.queue.sync {
                guard isOpen, peripheral.state == .connected else {
                    throw SMPTransportError(.disconnected, "the peripheral is not connected")
                }
                // Paused for a rediscovery: the old characteristic is invalid; wait for the new one.
                guard let characteristic else { return false }
                guard pacing.mayWrite(canSend: peripheral.canSendWriteWithoutResponse) else { return false }
                peripheral.writeValue(Data(value), for: characteristic, type: .withoutResponse)
                return true
            }
        }

        /// Waits for `peripheralIsReady(toSendWriteWithoutResponse:)`, or at most one poll interval:
        /// the callback is known to go missing, and the next write then goes out even if
        /// `canSendWriteWithoutResponse` is still `false` (as Nordic's library does), so a writer
        /// never hangs. Never a failure while the link is open.
        func waitUntilReadyForWrite() async throws {
            // At least 1 ms: a zero interval would spin on the queue while the buffer is full.
            let interval = max(central.configuration.readyPollInterval, .milliseconds(1))
            let seconds = Double(interval.components.seconds) + Double(interval.components.attoseconds) / 1e18
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                central.queue.async {
                    guard self.isOpen else {
                        continuation.resume(throwing: SMPTransportError(.disconnected, "the peripheral disconnected"))
                        return
                    }
                    // The ready callback may have come between the refused write and this block,
                    // and will not come again: do not wait a poll interval for nothing.
                    if self.characteristic != nil, self.peripheral.canSendWriteWithoutResponse {
                        continuation.resume()
                        return
                    }
                    let id = self.nextWaiter
                    self.nextWaiter += 1
                    self.waiters[id] = continuation
                    self.central.queue.asyncAfter(deadline: .now() + seconds) {
                        guard let waiter = self.waiters.removeValue(forKey: id) else { return }
                        // No callback within the interval: the next write goes regardless (not
                        // while paused, when there is nothing valid to write to).
                        if self.characteristic != nil {
                            self.pacing.waitEnded(
                                byReadySignal: false,
                                canSend: self.peripheral.canSendWriteWithoutResponse
                            )
                        }
                        waiter.resume()
                    }
                }
            }
        }

        /// Ends the link at once (`events` yields `.disconnected(nil)` and finishes) and cancels
        /// the connection, without waiting for `didDisconnectPeripheral`, which does not come when
        /// Bluetooth is off meanwhile; the central then forgets the link.
        func disconnect() async {
            central.queue.sync {
                guard isOpen else { return }
                end(nil)
                central.cancel(peripheral)
                central.forget(self)
            }
        }

        // MARK: - From the central (on its queue)

        func deliver(_ value: [UInt8]) {
            continuation.yield(.notification(value))
        }

        /// The ready callback came (or the link resumed): wake every waiting writer.
        func resumeWriters() {
            pacing.waitEnded(byReadySignal: true, canSend: peripheral.canSendWriteWithoutResponse)
            let ready = waiters
            waiters.removeAll()
            for waiter in ready.values { waiter.resume() }
        }

        /// The peripheral's services changed and the SMP characteristic is invalid: writes wait
        /// until ``resume(with:)`` gives the new one.
        func pause() {
            characteristic = nil
        }

        /// The rediscovered, subscribed SMP characteristic: writes go on with it.
        func resume(with characteristic: CBCharacteristic) {
            guard isOpen else { return }
            self.characteristic = characteristic
            pacing.reset()
            resumeWriters()
        }

        func end(_ error: SMPTransportError?) {
            guard isOpen else { return }
            isOpen = false
            let ready = waiters
            waiters.removeAll()
            for waiter in ready.values {
                waiter.resume(throwing: SMPTransportError(.disconnected, "the peripheral disconnected"))
            }
            continuation.yield(.disconnected(error))
            continuation.finish()
        }
    }
#endif
