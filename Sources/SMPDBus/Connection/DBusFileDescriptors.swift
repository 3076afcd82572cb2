// BlueZ and D-Bus: Linux only (SMP_BLUEZ is defined for Linux in Package.swift).
#if SMP_BLUEZ
    import Foundation
    import SMPBytes
    import SMPPOSIX

    /// The file descriptors that arrived with one message. Whoever needs one takes it (and then owns
    /// it); those nobody took are closed when this goes away, so a peer cannot make us leak them.
    public final class DBusFileDescriptors: Sendable {
        private let descriptors: Locked<[Int32?]>

        /// Wraps descriptors received from a socket.
        /// - Parameter descriptors: descriptors now owned by this object.
        public init(_ descriptors: [Int32]) {
            self.descriptors = Locked(descriptors)
        }

        /// None.
        public static var none: DBusFileDescriptors { DBusFileDescriptors([]) }

        /// How many arrived.
        public var count: Int { descriptors.withLock { $0.count } }

        /// Takes one descriptor: the caller owns it from now on and must close it.
        /// - Parameter index: the index an `h` value of the body holds.
        /// - Returns: the descriptor, or `nil` when the index is out of range or it was taken.
        public func take(_ index: Int) -> Int32? {
            descriptors.withLock { descriptors in
                guard descriptors.indices.contains(index), let descriptor = descriptors[index] else { return nil }
                descriptors[index] = nil
                return descriptor
            }
        }

        deinit {
            for case let descriptor? in descriptors.withLock({ $0 }) { _ = systemClose(descriptor) }
        }
    }

    /// A message received from the bus and the descriptors that came with it.
    public struct DBusReceivedMessage: Sendable {
        /// The message.
        public let message: DBusMessage
        /// Its descriptors (its `h` values index them).
        public let descriptors: DBusFileDescriptors

        /// Pairs a message with its descriptors.
        /// - Parameters:
        ///   - message: the message.
        ///   - descriptors: the descriptors.
        public init(message: DBusMessage, descriptors: DBusFileDescriptors = .none) {
            self.message = message
            self.descriptors = descriptors
        }
    }
#endif
