import SMPHCI
import Testing

/// Runs a setup against a peer that answers each request, until the setup is ready or fails;
/// returns the last action and every request the setup sent.
func runSetup(
    _ setup: inout GATTClientSetup,
    peer: (ATTPDU) -> [UInt8]?
) throws -> (GATTClientSetup.Action, [ATTPDU]) {
    var action = setup.start()
    var requests: [ATTPDU] = []
    for _ in 0..<50 {
        guard case .send(let pdus, let startsRequest) = action else { return (action, requests) }
        #expect(pdus.count == 1 && startsRequest)
        let request = try ATTPDU(bytes: try #require(pdus.last))
        requests.append(request)
        guard let answer = peer(request) else { return (action, requests) }
        action = setup.receive(answer)
    }
    Issue.record("the setup did not end")
    return (action, requests)
}

struct GATTClientSetupTests {
    @Test func reachesTheSMPChannelOfOurGATTServer() throws {
        var setup = GATTClientSetup()
        var server = GATTServer(deviceName: "sim")
        let (action, requests) = try runSetup(&setup) { server.receive($0.encoded()).reply }
        #expect(action == .ready(GATTClientChannel(mtu: 498, valueHandle: 0x0007, cccdHandle: 0x0008)))
        #expect(
            requests.map(\.opcode) == [
                .exchangeMTURequest, .findByTypeValueRequest, .readByTypeRequest, .readByTypeRequest,
                .findInformationRequest, .writeRequest,
            ]
        )
        #expect(server.notificationsEnabled)
        #expect(server.mtu == 498)
    }

    @Test func sendsBumblesRequestsAndReachesTheChannelOnBumblesAnswers() throws {
        var setup = GATTClientSetup()
        var action = setup.start()
        for (request, answer) in GATTServerTests.bumbleSetup {
            #expect(action == .send([try bytes(request)], startsRequest: true))
            action = setup.receive(try bytes(answer))
        }
        #expect(action == .ready(GATTClientChannel(mtu: 498, valueHandle: 0x0007, cccdHandle: 0x0008)))
        #expect(setup.receive(try bytes(ATTVectors.serverNotification)) == .none)
    }

    @Test func thePeersOwnRequestsAreAnsweredWithoutDisturbingTheSetup() throws {
        var setup = GATTClientSetup()
        _ = setup.start()
        let peerMTU = setup.receive(ATTPDU.exchangeMTURequest(clientRxMTU: 247).encoded())
        #expect(peerMTU == .send([ATTPDU.exchangeMTUResponse(serverRxMTU: 498).encoded()], startsRequest: false))
        let discovery = setup.receive(ATTPDU.readByGroupTypeRequest(.all, type: .primaryService).encoded())
        let notFound = ATTPDU.errorResponse(request: .readByGroupTypeRequest, handle: 1, error: .attributeNotFound)
        #expect(discovery == .send([notFound.encoded()], startsRequest: false))
        let read = setup.receive(ATTPDU.readRequest(handle: 3).encoded())
        let invalid = ATTPDU.errorResponse(request: .readRequest, handle: 3, error: .invalidHandle)
        #expect(read == .send([invalid.encoded()], startsRequest: false))
        #expect(setup.receive(ATTPDU.writeCommand(handle: 3, value: [1]).encoded()) == .none)
        let indication = setup.receive(ATTPDU.handleValueIndication(handle: 0x0010, value: [1]).encoded())
        #expect(indication == .send([ATTPDU.handleValueConfirmation.encoded()], startsRequest: false))
        #expect(
            setup.receive([0x02, 0xF2])
                == .send(
                    [ATTPDU.errorResponse(request: .exchangeMTURequest, handle: 0, error: .invalidPDU).encoded()],
                    startsRequest: false
                )
        )
        // Our own exchange goes on: the server's answer leads to the service search.
        guard case .send(let next, true) = setup.receive(ATTPDU.exchangeMTUResponse(serverRxMTU: 185).encoded()) else {
            Issue.record("no next request")
            return
        }
        #expect(try ATTPDU(bytes: try #require(next.first)).opcode == .findByTypeValueRequest)
    }

    @Test func theMTUIsTheSmallerOfTheTwoAndAtLeast23() throws {
        for (serverMTU, expected) in [(UInt16(185), 185), (600, 498), (20, 23)] {
            var setup = GATTClientSetup()
            var server = GATTServer(deviceName: "sim")
            let (action, _) = try runSetup(&setup) { request in
                if case .exchangeMTURequest = request {
                    return ATTPDU.exchangeMTUResponse(serverRxMTU: serverMTU).encoded()
                }
                return server.receive(request.encoded()).reply
            }
            guard case .ready(let channel) = action else {
                Issue.record("not ready: \(action)")
                continue
            }
            #expect(channel.mtu == expected)
        }
    }

    @Test func aServerThatCannotExchangeMTUsKeepsTheDefault() throws {
        var setup = GATTClientSetup()
        var server = GATTServer(deviceName: "sim")
        let (action, _) = try runSetup(&setup) { request in
            if case .exchangeMTURequest = request {
                return ATTPDU.errorResponse(request: .exchangeMTURequest, handle: 0, error: .requestNotSupported)
                    .encoded()
            }
            return server.receive(request.encoded()).reply
        }
        #expect(action == .ready(GATTClientChannel(mtu: 23, valueHandle: 7, cccdHandle: 8)))
    }

    @Test func theThirtySecondRuleFailsTheSetupAndEndsTraffic() throws {
        var setup = GATTClientSetup()
        #expect(setup.timedOut() == .none)
        _ = setup.start()
        guard case .failed(let error) = setup.timedOut() else {
            Issue.record("a timeout did not fail the setup")
            return
        }
        #expect(error == HCIError(.timeout))
        #expect(error.message.contains("Exchange MTU Request"))
        #expect(setup.receive(ATTPDU.exchangeMTUResponse(serverRxMTU: 498).encoded()) == .none)
        #expect(setup.receive(ATTPDU.exchangeMTURequest(clientRxMTU: 498).encoded()) == .none)
        #expect(setup.start() == .none)
    }

    @Test func nothingIsTimedOnceReady() throws {
        var setup = GATTClientSetup()
        var server = GATTServer(deviceName: "sim")
        _ = try runSetup(&setup) { server.receive($0.encoded()).reply }
        #expect(setup.timedOut() == .none)
    }

    @Test func aTimeoutLaterInTheSetupNamesTheRequest() throws {
        var setup = GATTClientSetup()
        _ = setup.start()
        _ = setup.receive(ATTPDU.exchangeMTUResponse(serverRxMTU: 498).encoded())
        guard case .failed(let error) = setup.timedOut() else {
            Issue.record("a timeout did not fail the setup")
            return
        }
        #expect(error.message.contains("Find By Type Value Request"))
    }
}
