import Foundation

/// Image management, group 1: slot states, test/confirm, upload, erase and slot information.
///
/// Spec: `smp-protocol.md` §5 (commands) and §3.4 (`img_mgmt_err_code_t`).
///
/// Slots and images (from MCUboot): an *image* is a pair of slots, the *primary* (slot 0, where
/// the application runs) and the *secondary* (slot 1, where an update is uploaded). In responses
/// `slot` is 0 or 1 within its image; Zephyr numbers the flash areas 0…2N−1 internally
/// (image-0 = `slot0_partition`/`slot1_partition`, image-1 = `slot2_partition`/`slot3_partition`).
///
/// The image hash that state reports and that test/confirm take is the SHA-256 from the image's
/// TLV area (over header, body and protected TLVs), not the SHA-256 of the file; the upload's
/// `sha` is the SHA-256 of the whole uploaded file.
///
/// Commands 2 (file), 3 (corelist) and 4 (coreload) are reserved and unsupported by Zephyr and
/// MCUboot, so they have no types here.
public enum ImageManagement: SMPManagementGroup {
    /// Group 1.
    public static let group = SMPGroup.image

    /// `img_mgmt_err_code_t` names without the `IMG_MGMT_ERR_` prefix, by value.
    public static let returnCodeNames = [
        "OK", "UNKNOWN", "FLASH_CONFIG_QUERY_FAIL", "NO_IMAGE", "NO_TLVS", "INVALID_TLV",
        "TLV_MULTIPLE_HASHES_FOUND", "TLV_INVALID_SIZE", "HASH_NOT_FOUND", "NO_FREE_SLOT", "FLASH_OPEN_FAILED",
        "FLASH_READ_FAILED", "FLASH_WRITE_FAILED", "FLASH_ERASE_FAILED", "INVALID_SLOT", "NO_FREE_MEMORY",
        "FLASH_CONTEXT_ALREADY_SET", "FLASH_CONTEXT_NOT_SET", "FLASH_AREA_DEVICE_NULL", "INVALID_PAGE_OFFSET",
        "INVALID_OFFSET", "INVALID_LENGTH", "INVALID_IMAGE_HEADER", "INVALID_IMAGE_HEADER_MAGIC", "INVALID_HASH",
        "INVALID_FLASH_ADDRESS", "VERSION_GET_FAILED", "CURRENT_VERSION_IS_NEWER", "IMAGE_ALREADY_PENDING",
        "INVALID_IMAGE_VECTOR_TABLE", "INVALID_IMAGE_TOO_LARGE", "INVALID_IMAGE_DATA_OVERRUN",
        "IMAGE_CONFIRMATION_DENIED", "IMAGE_SETTING_TEST_TO_ACTIVE_DENIED", "ACTIVE_SLOT_NOT_KNOWN",
    ]

    /// This group's SMP v2 return code (`err.rc` when `err.group` is 1).
    public typealias ReturnCode = SMPGroupReturnCode<ImageManagement>

    // MARK: - Shared models

    /// The state of the image held in one slot, an element of the state list.
    ///
    /// The five flags are stored as sent: with `CONFIG_MCUMGR_GRP_IMG_FRUGAL_LIST` Zephyr omits
    /// false flags, otherwise it writes every flag. Read them through the `is…` properties, which
    /// treat an absent flag as false; keeping the optionals lets a simulated device reproduce
    /// either form byte for byte.
    public struct SlotState: Codable, Sendable, Hashable {
        /// Image number (wire key `image`; only sent by devices supporting more than one image,
        /// absent means 0).
        public var image: UInt32?
        /// Slot within the image: 0 primary, 1 secondary (wire key `slot`, always present).
        public var slot: UInt32
        /// Version text `major.minor.revision`, plus `.build` when the build number is not 0
        /// (wire key `version`, always present).
        public var version: String
        /// SHA-256 from the image's TLV area, 32 bytes (wire key `hash`; absent only from MCUboot
        /// serial recovery built without `CONFIG_BOOT_SERIAL_IMG_GRP_HASH`).
        public var hash: Data?
        /// The header lacks the non-bootable flag (wire key `bootable`; absent means false).
        public var bootable: Bool?
        /// The image will run at the next boot (wire key `pending`; absent means false).
        public var pending: Bool?
        /// The image is confirmed (wire key `confirmed`; absent means false).
        public var confirmed: Bool?
        /// The image is running (wire key `active`; absent means false).
        public var active: Bool?
        /// The image stays after the next boot, i.e. will not revert (wire key `permanent`; absent
        /// means false).
        public var permanent: Bool?

        /// Creates a slot state.
        public init(
            image: UInt32? = nil,
            slot: UInt32,
            version: String,
            hash: Data? = nil,
            bootable: Bool? = nil,
            pending: Bool? = nil,
            confirmed: Bool? = nil,
            active: Bool? = nil,
            permanent: Bool? = nil
        ) {
            self.image = image
            self.slot = slot
            self.version = version
            self.hash = hash
            self.bootable = bootable
            self.pending = pending
            self.confirmed = confirmed
            self.active = active
            self.permanent = permanent
        }

        /// The image number, 0 when the device did not send one.
        public var imageNumber: UInt32 { image ?? 0 }
        /// `bootable`, absent read as false.
        public var isBootable: Bool { bootable ?? false }
        /// `pending`, absent read as false.
        public var isPending: Bool { pending ?? false }
        /// `confirmed`, absent read as false.
        public var isConfirmed: Bool { confirmed ?? false }
        /// `active`, absent read as false.
        public var isActive: Bool { active ?? false }
        /// `permanent`, absent read as false.
        public var isPermanent: Bool { permanent ?? false }

        /// The flags set, by their wire names in Go mcumgr's order, then `bootable`: what a slot
        /// table shows (the command line's and the page's alike).
        public var flagNames: [String] {
            [
                ("active", isActive), ("confirmed", isConfirmed), ("pending", isPending),
                ("permanent", isPermanent), ("bootable", isBootable),
            ].filter(\.1).map(\.0)
        }

        /// The entry with every flag written out, an absent one as `false` — as Zephyr writes
        /// them without its frugal list.
        public var withEveryFlag: SlotState {
            SlotState(
                image: image,
                slot: slot,
                version: version,
                hash: hash,
                bootable: isBootable,
                pending: isPending,
                confirmed: isConfirmed,
                active: isActive,
                permanent: isPermanent
            )
        }
    }

    // MARK: - 0 state

    /// Command 0 read: the state of every slot holding a valid image.
    public struct StateRead: SMPReadRequest, Hashable {
        public static var group: SMPGroup { .image }
        public static var command: UInt8 { 0 }

        /// Creates the request (an empty map).
        public init() {}

        /// The image state list; also the answer to ``StateWrite``.
        public struct Response: Codable, Sendable, Hashable {
            /// One entry per slot holding a valid image (wire key `images`, always present; empty
            /// slots are omitted).
            public var images: [SlotState]
            /// Split-image status, unused by Zephyr, which sends 0 unless the frugal list is
            /// enabled (wire key `splitStatus`, optional).
            public var splitStatus: Int?

            /// Creates a response.
            /// - Parameters:
            ///   - images: the slot states.
            ///   - splitStatus: the split status, if sent.
            public init(images: [SlotState], splitStatus: Int? = nil) {
                self.images = images
                self.splitStatus = splitStatus
            }
        }
    }

    /// Command 0 write: mark an image for test (one boot) or confirm it (permanent).
    ///
    /// Without `confirm` (or with `false`) the image with `hash` is tested: it runs at the next
    /// boot and reverts at the following reset unless confirmed. With `confirm: true` and a hash
    /// that slot becomes permanent; with `confirm: true` and no hash the running image is
    /// confirmed. Testing without a hash or with a hash that is not 32 bytes → `INVALID_HASH`;
    /// unknown hash → `HASH_NOT_FOUND`; see `smp-protocol.md` §5.2 for the other refusals.
    public struct StateWrite: SMPWriteRequest, Hashable {
        /// A confirm naming a hash is never sent again automatically: its meaning depends on where
        /// the image is. Sent again after the device reset and its bootloader reverted the image
        /// (a watchdog during the test), it would mark the reverted image for a permanent swap at
        /// the next boot — the opposite of the revert. A test, or a confirm of whatever runs (no
        /// hash), means the same each time.
        public var isIdempotent: Bool { !(confirm == true && hash != nil) }

        public static var group: SMPGroup { .image }
        public static var command: UInt8 { 0 }

        /// The image's TLV SHA-256, 32 bytes (wire key `hash`; required to test, optional to
        /// confirm).
        public var hash: Data?
        /// `true` to make the image permanent, `false` or absent to test it (wire key `confirm`,
        /// optional).
        public var confirm: Bool?

        /// Creates the request.
        /// - Parameters:
        ///   - hash: the image hash.
        ///   - confirm: `true` to confirm, `false`/`nil` to test.
        public init(hash: Data? = nil, confirm: Bool? = nil) {
            self.hash = hash
            self.confirm = confirm
        }

        /// The new state list.
        public typealias Response = StateRead.Response
    }

    // MARK: - 1 upload

    /// Command 1, upload: one chunk of an image.
    ///
    /// The first chunk (`off` 0) carries `len` and optionally `image`, `sha` and `upgrade`; later
    /// chunks carry only `off` and `data`. Always continue from the offset the device returns,
    /// never from "sent offset + chunk size": a device answers a chunk at an unexpected offset
    /// with success and the offset it expects, and may trim chunks to its flash alignment.
    ///
    /// Properties are declared in the order the canonical (length-first) key sort produces
    /// (`len`, `off`, `sha`, `data`, `image`, `upgrade`), so even non-canonical output has the
    /// same key order as the `smp` package.
    public struct Upload: SMPWriteRequest, Hashable {
        public static var group: SMPGroup { .image }
        public static var command: UInt8 { 1 }

        /// Total image size in bytes (wire key `len`; required when `off` is 0, else omitted).
        public var length: UInt64?
        /// Offset of this chunk in the image, in bytes (wire key `off`, always required).
        public var offset: UInt64
        /// SHA-256 of the whole file, 32 bytes; identifies the upload session for resumption and
        /// is checked at the end with `CONFIG_IMG_ENABLE_IMAGE_CHECK` (wire key `sha`, optional,
        /// first chunk only).
        public var sha256: Data?
        /// The chunk's bytes (wire key `data`, always required).
        public var data: Data
        /// Target image number, default 0; the slot id with direct upload (wire key `image`,
        /// optional, first chunk only).
        public var image: UInt32?
        /// Refuse unless the new version is greater than the running one →
        /// `CURRENT_VERSION_IS_NEWER` (wire key `upgrade`, optional, first chunk only).
        public var upgrade: Bool?

        /// Creates an upload chunk.
        /// - Parameters:
        ///   - offset: offset of the chunk.
        ///   - data: the chunk.
        ///   - length: total size (first chunk).
        ///   - sha256: SHA-256 of the file (first chunk).
        ///   - image: target image (first chunk).
        ///   - upgrade: refuse downgrades (first chunk).
        public init(
            offset: UInt64,
            data: Data,
            length: UInt64? = nil,
            sha256: Data? = nil,
            image: UInt32? = nil,
            upgrade: Bool? = nil
        ) {
            self.length = length
            self.offset = offset
            self.sha256 = sha256
            self.data = data
            self.image = image
            self.upgrade = upgrade
        }

        enum CodingKeys: String, CodingKey {
            case length = "len"
            case offset = "off"
            case sha256 = "sha"
            case data, image, upgrade
        }

        /// The device's progress.
        public struct Response: Codable, Sendable, Hashable {
            /// The offset the device expects next, i.e. the bytes accepted so far (wire key `off`,
            /// always present on success). Equal to the image size when the upload is complete.
            public var offset: UInt64
            /// Whether the written image hashes to the `sha` of the first chunk (wire key `match`,
            /// only in the final response with image check enabled).
            public var match: Bool?

            /// Creates a response.
            /// - Parameters:
            ///   - offset: the next expected offset.
            ///   - match: the final hash check, if any.
            public init(offset: UInt64, match: Bool? = nil) {
                self.offset = offset
                self.match = match
            }

            enum CodingKeys: String, CodingKey {
                case offset = "off"
                case match
            }
        }
    }

    // MARK: - 5 erase

    /// Command 5, erase a slot. Synchronous and slow; also ends any upload session. A slot whose
    /// image is pending or confirmed for the next boot is refused with `NO_FREE_SLOT` (v1
    /// `EBADSTATE`).
    public struct Erase: SMPWriteRequest, Hashable {
        /// Never sent again automatically: a second erase could wipe an upload that started in between, and on Zephyr 3.4 fails on a blank slot.
        public var isIdempotent: Bool { false }

        public static var group: SMPGroup { .image }
        public static var command: UInt8 { 5 }

        /// Slot to erase (wire key `slot`, optional; default 1, the secondary slot).
        public var slot: UInt32?

        /// Creates the request.
        /// - Parameter slot: the slot, or `nil` for the device's default (1).
        public init(slot: UInt32? = nil) { self.slot = slot }

        /// Success carries no fields.
        public typealias Response = SMPEmptyResponse
    }

    // MARK: - 6 slot info

    /// Command 6, slot information: slot sizes per image (`CONFIG_MCUMGR_GRP_IMG_SLOT_INFO`).
    public struct SlotInfo: SMPReadRequest, Hashable {
        public static var group: SMPGroup { .image }
        public static var command: UInt8 { 6 }

        /// Creates the request (an empty map).
        public init() {}

        /// One slot of an image.
        public struct Slot: Codable, Sendable, Hashable {
            /// Slot within the image, 0 or 1 (wire key `slot`, always present).
            public var slot: UInt32
            /// Slot size in bytes (wire key `size`, always present).
            public var size: UInt64
            /// The `image` value an upload must carry to target this slot directly (wire key
            /// `upload_image_id`, only with `CONFIG_MCUMGR_GRP_IMG_DIRECT_UPLOAD`).
            public var uploadImageID: UInt32?

            /// Creates a slot description.
            public init(slot: UInt32, size: UInt64, uploadImageID: UInt32? = nil) {
                self.slot = slot
                self.size = size
                self.uploadImageID = uploadImageID
            }

            enum CodingKeys: String, CodingKey {
                case slot, size
                case uploadImageID = "upload_image_id"
            }
        }

        /// The slots of one image.
        public struct Image: Codable, Sendable, Hashable {
            /// Image number (wire key `image`, always present).
            public var image: UInt32
            /// Its slots (wire key `slots`, always present).
            public var slots: [Slot]
            /// Largest image that fits, in bytes (wire key `max_image_size`, present with the
            /// "too large" checks enabled).
            public var maxImageSize: UInt64?

            /// Creates an image description.
            public init(image: UInt32, slots: [Slot], maxImageSize: UInt64? = nil) {
                self.image = image
                self.slots = slots
                self.maxImageSize = maxImageSize
            }

            enum CodingKeys: String, CodingKey {
                case image, slots
                case maxImageSize = "max_image_size"
            }
        }

        /// The slot table.
        public struct Response: Codable, Sendable, Hashable {
            /// One entry per image (wire key `images`, always present).
            public var images: [Image]

            /// Creates a response.
            /// - Parameter images: the images.
            public init(images: [Image]) { self.images = images }
        }
    }
}

extension SMPGroupReturnCode where Group == ImageManagement {
    /// 0 OK: success.
    public static var ok: Self { Self(rawValue: 0) }
    /// 1 UNKNOWN: unknown error.
    public static var unknown: Self { Self(rawValue: 1) }
    /// 2 FLASH_CONFIG_QUERY_FAIL: querying the flash area configuration failed.
    public static var flashConfigQueryFail: Self { Self(rawValue: 2) }
    /// 3 NO_IMAGE: there is no image in the slot.
    public static var noImage: Self { Self(rawValue: 3) }
    /// 4 NO_TLVS: the image in the slot has no TLVs.
    public static var noTLVs: Self { Self(rawValue: 4) }
    /// 5 INVALID_TLV: the image has a TLV of invalid type or length.
    public static var invalidTLV: Self { Self(rawValue: 5) }
    /// 6 TLV_MULTIPLE_HASHES_FOUND: the image has several hash TLVs.
    public static var tlvMultipleHashesFound: Self { Self(rawValue: 6) }
    /// 7 TLV_INVALID_SIZE: the image has a TLV of invalid size.
    public static var tlvInvalidSize: Self { Self(rawValue: 7) }
    /// 8 HASH_NOT_FOUND: no image has the given hash (or the image lacks a hash TLV).
    public static var hashNotFound: Self { Self(rawValue: 8) }
    /// 9 NO_FREE_SLOT: there is no slot free for the upload, or the slot is in use.
    public static var noFreeSlot: Self { Self(rawValue: 9) }
    /// 10 FLASH_OPEN_FAILED: opening the flash area failed.
    public static var flashOpenFailed: Self { Self(rawValue: 10) }
    /// 11 FLASH_READ_FAILED: reading the flash area failed.
    public static var flashReadFailed: Self { Self(rawValue: 11) }
    /// 12 FLASH_WRITE_FAILED: writing the flash area failed.
    public static var flashWriteFailed: Self { Self(rawValue: 12) }
    /// 13 FLASH_ERASE_FAILED: erasing the flash area failed.
    public static var flashEraseFailed: Self { Self(rawValue: 13) }
    /// 14 INVALID_SLOT: the slot number is not valid.
    public static var invalidSlot: Self { Self(rawValue: 14) }
    /// 15 NO_FREE_MEMORY: not enough heap memory.
    public static var noFreeMemory: Self { Self(rawValue: 15) }
    /// 16 FLASH_CONTEXT_ALREADY_SET: the flash context is already set.
    public static var flashContextAlreadySet: Self { Self(rawValue: 16) }
    /// 17 FLASH_CONTEXT_NOT_SET: the flash context is not set.
    public static var flashContextNotSet: Self { Self(rawValue: 17) }
    /// 18 FLASH_AREA_DEVICE_NULL: the flash area has no device.
    public static var flashAreaDeviceNull: Self { Self(rawValue: 18) }
    /// 19 INVALID_PAGE_OFFSET: the page offset is not valid.
    public static var invalidPageOffset: Self { Self(rawValue: 19) }
    /// 20 INVALID_OFFSET: the required `off` is missing.
    public static var invalidOffset: Self { Self(rawValue: 20) }
    /// 21 INVALID_LENGTH: the first chunk lacks the required `len`.
    public static var invalidLength: Self { Self(rawValue: 21) }
    /// 22 INVALID_IMAGE_HEADER: the first chunk is shorter than an image header.
    public static var invalidImageHeader: Self { Self(rawValue: 22) }
    /// 23 INVALID_IMAGE_HEADER_MAGIC: the image header magic is wrong.
    public static var invalidImageHeaderMagic: Self { Self(rawValue: 23) }
    /// 24 INVALID_HASH: the hash is missing where required, or has the wrong length.
    public static var invalidHash: Self { Self(rawValue: 24) }
    /// 25 INVALID_FLASH_ADDRESS: the image's load address does not match the slot.
    public static var invalidFlashAddress: Self { Self(rawValue: 25) }
    /// 26 VERSION_GET_FAILED: reading the running application's version failed.
    public static var versionGetFailed: Self { Self(rawValue: 26) }
    /// 27 CURRENT_VERSION_IS_NEWER: `upgrade` was set and the image is not newer.
    public static var currentVersionIsNewer: Self { Self(rawValue: 27) }
    /// 28 IMAGE_ALREADY_PENDING: another image is already pending.
    public static var imageAlreadyPending: Self { Self(rawValue: 28) }
    /// 29 INVALID_IMAGE_VECTOR_TABLE: the image's vector table is invalid.
    public static var invalidImageVectorTable: Self { Self(rawValue: 29) }
    /// 30 INVALID_IMAGE_TOO_LARGE: the image does not fit the slot.
    public static var invalidImageTooLarge: Self { Self(rawValue: 30) }
    /// 31 INVALID_IMAGE_DATA_OVERRUN: more data than the announced `len`.
    public static var invalidImageDataOverrun: Self { Self(rawValue: 31) }
    /// 32 IMAGE_CONFIRMATION_DENIED: confirming this image is not allowed.
    public static var imageConfirmationDenied: Self { Self(rawValue: 32) }
    /// 33 IMAGE_SETTING_TEST_TO_ACTIVE_DENIED: the running slot cannot be set for test.
    public static var imageSettingTestToActiveDenied: Self { Self(rawValue: 33) }
    /// 34 ACTIVE_SLOT_NOT_KNOWN: the active slot could not be determined.
    public static var activeSlotNotKnown: Self { Self(rawValue: 34) }
}
