import SMPCBOR
import Testing

@testable import SMPCore

/// How a device's refusal is named: a management code (v1 `rc`) is the SMP layer's, whatever
/// the group of the request, so it is the device's error; a group code is that group's. No name
/// repeats the number.
struct SMPDeviceErrorTests {
    @Test(
        arguments: [
            (["rc": 2], SMPGroup.image, "device error 2 ENOMEM (out of memory)"),
            (["rc": 8], .os, "device error 8 ENOTSUP (not supported)"),
            (["rc": 10, "rsn": "try later"], .os, "device error 10 EBUSY (busy, try again): try later"),
            (["rc": 300], .image, "device error 300 EPERUSER+44 (application-defined)"),
            (["rc": 99], .image, "device error 99 UNKNOWN_RC"),
            (["err": ["group": 1, "rc": 9]], .image, "image error 9 NO_FREE_SLOT"),
            (["err": ["group": 63, "rc": 3]], .statistics, "basic error 3 FLASH_CONFIG_QUERY_FAIL"),
            (["err": ["group": 8, "rc": 99]], .fileSystem, "fs error 99 UNKNOWN_RC"),
        ] as [(CBOR, SMPGroup, String)]
    )
    func descriptions(_ payload: CBOR, _ group: SMPGroup, _ text: String) {
        do {
            try SMPResponseStatus.check(payload, group: group, command: 1)
            Issue.record("\(payload) passed as success")
        } catch let error as SMPDeviceError {
            #expect(error.description == text)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func everyManagementCodeHasAMeaningExceptSuccess() {
        #expect(SMPReturnCode.ok.meaning == nil)
        for value in 1...13 { #expect(SMPReturnCode(rawValue: value).meaning != nil, "rc \(value)") }
        #expect(SMPReturnCode(rawValue: 14).meaning == nil)
    }
}
