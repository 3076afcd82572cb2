import Crypto
import Foundation
import MCUmgr

extension ImageUpload {
    /// Creates an image upload, computing the SHA-256 of the file that identifies the upload
    /// session (so an interrupted upload resumes on the device).
    /// - Parameters:
    ///   - data: the image file's bytes.
    ///   - image: the target image number.
    ///   - upgrade: refuse unless newer than the running image.
    ///   - imageHash: the image's hash TLV, as the device will list it.
    public init(data: Data, image: Int = 0, upgrade: Bool = false, imageHash: [UInt8]? = nil) {
        self.init(
            data: data,
            image: image,
            upgrade: upgrade,
            sha256: Data(SHA256.hash(data: data)),
            imageHash: imageHash
        )
    }
}
