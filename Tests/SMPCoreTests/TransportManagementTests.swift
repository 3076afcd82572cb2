import Foundation
import SMPCBOR
import SMPCore
import SMPTestSupport
import Testing

struct TransportManagementTests {
    @Test(arguments: [
        RequestCase(
            TransportManagement.Connect(
                transport: .bluetooth,
                mode: 0,
                address: "C0:11:22:33:44:55",
                addressType: 1,
                leCoded: true
            ),
            "0a000044000b0000a5697472616e73706f727402646d6f64650067616464726573737143303a31313a32323a33333a34343a3535"
                + "6c616464726573735f7479706501686c655f636f646564f5"
        ),
        RequestCase(TransportManagement.Disconnect(all: true), "0a000006000b0001a163616c6cf5"),
        RequestCase(TransportManagement.Disconnect(), "0a000001000b0001a0"),
        RequestCase(TransportManagement.Status(), "08000001000b0002a0"),
        RequestCase(TransportManagement.ListTransports(), "08000001000b0006a0"),
    ])
    func requestsEncodeToTheseBytes(_ example: RequestCase) throws {
        #expect(try example.encode() == example.hex)
    }

    @Test func statusVariantsDecodeIntoOneType() throws {
        let unbridged = try GroupTesting.response(to: TransportManagement.Status.self, ["supported": 2, "active": 0])
        #expect(unbridged.bridged == nil && unbridged.transport == nil)
        let bridged = try GroupTesting.response(
            to: TransportManagement.Status.self,
            ["supported": 2, "active": 1, "bridged": true, "transport": 64]
        )
        #expect(bridged.transport == .userDefined)
        let modes = try GroupTesting.response(
            to: TransportManagement.Modes.self,
            ["modes": [["id": 0, "description": "central", "outgoing": true]]]
        )
        #expect(modes.modes.first?.incoming == nil && modes.modes.first?.outgoing == true)
        let configs = try GroupTesting.response(to: TransportManagement.ConfigDetails.self, ["configs": []])
        #expect(configs.configs.isEmpty)
    }

    @Test func groupErrorsNameTheTransportCode() throws {
        let error = try #require(
            try GroupTesting.deviceError(TransportManagement.Disconnect.self, ["err": ["group": 11, "rc": 17]])
        )
        #expect(error.codeName == "CONNECT_FAILED" && error.matches(TransportManagement.ReturnCode.connectFailed))
    }

    @Test(arguments: [
        ReturnCodeCase(TransportManagement.ReturnCode.ok, 0, "OK"),
        ReturnCodeCase(TransportManagement.ReturnCode.unknown, 1, "UNKNOWN"),
        ReturnCodeCase(
            TransportManagement.ReturnCode.transportMissingRequiredFunctions,
            2,
            "TRANSPORT_MISSING_REQUIRED_FUNCTIONS"
        ),
        ReturnCodeCase(
            TransportManagement.ReturnCode.transportMissingInfoFunctions,
            3,
            "TRANSPORT_MISSING_INFO_FUNCTIONS"
        ),
        ReturnCodeCase(TransportManagement.ReturnCode.invalidTransport, 4, "INVALID_TRANSPORT"),
        ReturnCodeCase(TransportManagement.ReturnCode.invalidMode, 5, "INVALID_MODE"),
        ReturnCodeCase(TransportManagement.ReturnCode.allContextsUsed, 6, "ALL_CONTEXTS_USED"),
        ReturnCodeCase(
            TransportManagement.ReturnCode.bothTransportAndAllParameters,
            7,
            "BOTH_TRANSPORT_AND_ALL_PARAMETERS"
        ),
        ReturnCodeCase(TransportManagement.ReturnCode.notBridged, 8, "NOT_BRIDGED"),
        ReturnCodeCase(TransportManagement.ReturnCode.sameBridgeDeviceDisallowed, 9, "SAME_BRIDGE_DEVICE_DISALLOWED"),
        ReturnCodeCase(
            TransportManagement.ReturnCode.transportIngoingNotSupported,
            10,
            "TRANSPORT_INGOING_NOT_SUPPORTED"
        ),
        ReturnCodeCase(
            TransportManagement.ReturnCode.transportOutgoingNotSupported,
            11,
            "TRANSPORT_OUTGOING_NOT_SUPPORTED"
        ),
        ReturnCodeCase(
            TransportManagement.ReturnCode.incomingTransportAlreadyBridged,
            12,
            "INCOMING_TRANSPORT_ALREADY_BRIDGED"
        ),
        ReturnCodeCase(
            TransportManagement.ReturnCode.outgoingTransportAlreadyBridged,
            13,
            "OUTGOING_TRANSPORT_ALREADY_BRIDGED"
        ),
        ReturnCodeCase(TransportManagement.ReturnCode.connectMissingParameter, 14, "CONNECT_MISSING_PARAMETER"),
        ReturnCodeCase(TransportManagement.ReturnCode.connectInvalidParameter, 15, "CONNECT_INVALID_PARAMETER"),
        ReturnCodeCase(TransportManagement.ReturnCode.connectUnsupportedParameter, 16, "CONNECT_UNSUPPORTED_PARAMETER"),
        ReturnCodeCase(TransportManagement.ReturnCode.connectFailed, 17, "CONNECT_FAILED"),
    ])
    func returnCodesFollowTheSpecTable(_ example: ReturnCodeCase<TransportManagement>) {
        example.verify()
        #expect(TransportManagement.returnCodeNames.count == 18)
    }
}
