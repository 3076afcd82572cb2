import MCUboot

/// The slots as MCUboot's serial recovery sees them (`boot_serial.c`): what it lists and where an
/// upload goes.
extension MCUbootModel {
    /// One image as serial recovery lists it.
    struct RecoveryListing: Sendable, Hashable {
        var image: Int
        var slot: Int
        var hash: [UInt8]?
        var version: String
    }

    /// The slots serial recovery lists (`bs_list`): only those holding an image MCUboot validates
    /// in full — header magic, hash and, with a key, signature — so a blank, partial or badly
    /// signed slot is simply absent. Single-slot builds open the primary slot only.
    func recoveryListing() -> [RecoveryListing] {
        var listing: [RecoveryListing] = []
        for image in 0..<slots.count {
            for slot in 0..<slots[image].count where isValid(slots[image][slot].data) {
                guard let parsed = try? MCUbootImage(bytes: slots[image][slot].data) else { continue }
                listing.append(
                    RecoveryListing(
                        image: image,
                        slot: slot,
                        hash: parsed.hash,
                        version: parsed.header.version.description
                    )
                )
            }
        }
        return listing
    }

    /// The slot a recovery upload writes (`bs_upload`), or the `rc` it answers.
    ///
    /// Without direct upload `image` names an image and its primary slot is written; MCUboot
    /// lets `image` equal the image count through (an off-by-one), which on a single-image Zephyr
    /// build still lands in the primary slot and elsewhere fails to open (`rc 3`); above that it is
    /// `rc 5`. With direct upload `image` names a slot: 0 and 1 image 0's primary, 2 its
    /// secondary, 3 image 1's primary, and so on; any other is `rc 3`.
    /// - Parameters:
    ///   - image: the upload's `image` value.
    ///   - directUpload: `MCUBOOT_SERIAL_DIRECT_IMAGE_UPLOAD`.
    /// - Returns: the image and slot, or the refusal's `rc`.
    func recoveryUploadTarget(image: Int, directUpload: Bool) -> Result<(image: Int, slot: Int), RecoveryRefusal> {
        if directUpload {
            let id = max(image, 1) - 1
            let target = (image: id / 2, slot: id % 2)
            guard image >= 0, target.image < slots.count, target.slot < slots[target.image].count else {
                return .failure(.invalidValue)
            }
            return .success(target)
        }
        guard image >= 0, image <= slots.count else { return .failure(.noEntry) }
        if image == slots.count {
            return slots.count == 1 ? .success((0, 0)) : .failure(.invalidValue)
        }
        return .success((image, 0))
    }

    /// The `rc` values serial recovery answers with (SMP v1 codes only).
    enum RecoveryRefusal: Int, Error, Sendable {
        case unknown = 1
        case invalidValue = 3
        case noEntry = 5
    }
}
