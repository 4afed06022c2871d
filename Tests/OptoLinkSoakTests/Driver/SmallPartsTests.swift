import Foundation
import OptoLink
import Testing

import OptoLinkSoak
import SoakRecords

@Suite("Click page, attempt classification")
struct SmallPartsTests {
    @Test("the click page's clipboard payload is found and unescaped")
    func clickPage() {
        let html = """
            <html><body><input type="hidden" id="cbt" value="https://links.acme.test/acme/welcome?opl_click=opl_abc&amp;x=&quot;1&quot;&#x2F;"></body></html>
            """
        #expect(
            ClickPage.clipboardPayload(in: html) == "https://links.acme.test/acme/welcome?opl_click=opl_abc&x=\"1\"/")
        #expect(ClickPage.clipboardPayload(in: "<input id=\"other\" value=\"x\">") == nil)
    }

    @Test("Retry-After is parsed from the 429 body only")
    func retryAfter() {
        let body = Data(#"{"statusCode":429,"message":"Rate limit exceeded. Retry after 17 seconds."}"#.utf8)
        #expect(AttemptClassification.retryAfterSeconds(status: 429, body: body) == 17)
        #expect(AttemptClassification.retryAfterSeconds(status: 429, body: Data("Retry after 1 second(s).".utf8)) == 1)
        #expect(AttemptClassification.retryAfterSeconds(status: 503, body: body) == nil)
        #expect(AttemptClassification.retryAfterSeconds(status: 429, body: Data("<html>".utf8)) == nil)
    }

    @Test("the device population is deterministic and honours the shared-NAT share")
    func population() {
        let p = DevicePopulation(count: 1000, sharedNAT: 0.3, sharedNATAddress: "198.51.100.9")
        let a = VirtualDevice.population(p, seed: 5)
        let b = VirtualDevice.population(p, seed: 5)
        #expect(a.map(\.clientIP) == b.map(\.clientIP))
        let nat = a.filter(\.sharedNAT)
        #expect((250...350).contains(nat.count))
        #expect(nat.allSatisfy { $0.clientIP == "198.51.100.9" })
        let own = a.filter { !$0.sharedNAT }.map(\.clientIP)
        #expect(Set(own).count == own.count)
        #expect(a[0].id == "d000001")
        #expect(a[0].userAgent.contains("iPhone OS 18_1"))
    }
}

@Suite("Fast formatting and scanning")
struct FastPathTests {
    @Test(
        "seconds are written with microsecond resolution",
        arguments: [
            (0.0, "0.000000"), (1.5, "1.500000"), (0.0000014, "0.000001"), (12.3456789, "12.345679"),
            (-0.25, "-0.250000"),
        ])
    func seconds(value: Double, text: String) {
        #expect(formatSeconds(value) == text)
    }

    @Test("the correlation id is found in compact and spaced JSON, and only on events")
    func correlation() {
        let compact = Data(#"{"deviceId":"a","properties":{"x":"1","opl_corr":"r:d000001:3"}}"#.utf8)
        let spaced = Data(#"{"properties": {"opl_corr": "r:d000002:4"}}"#.utf8)
        #expect(AttemptClassification.correlationId(endpoint: .events, body: compact) == "r:d000001:3")
        #expect(AttemptClassification.correlationId(endpoint: .events, body: spaced) == "r:d000002:4")
        #expect(AttemptClassification.correlationId(endpoint: .identity, body: compact) == nil)
        #expect(AttemptClassification.correlationId(endpoint: .events, body: Data("{}".utf8)) == nil)
    }
}

/// `AttemptClassification.isOffContract`: the success status with a body that is not the contract's.
@Suite struct OffContractBodyTests {
    @Test(arguments: [
        (ContractEndpoint.match, 201, #"{"matched":false,"matchMethod":"NONE"}"#, false),
        (
            .match, 201,
            #" {"matched":true,"matchMethod":"CLIPBOARD","matchConfidence":"exact","linkId":"l","path":"/p","params":null} "#,
            false
        ),
        (.match, 201, #"{"matched":true,"matchMethod":"CLIPBOARD","linkId":"l"}"#, true),
        (.match, 201, #"{"matched":1,"matchMethod":"NONE"}"#, true),
        (.match, 201, "[]", true), (.match, 201, "", true), (.match, 201, #"{"matchedX":1}"#, true),
        (.match, 429, "<html></html>", false), (.data, 200, #"{"linkId":"l","path":"/p","params":{}}"#, false),
        (.data, 200, "{}", true), (.events, 200, #"{"ok":true}"#, false), (.events, 200, "<html>denied</html>", true),
        (.events, 500, "<html>502</html>", false), (.session, 200, "", true), (.session, 200, "null", true),
        (.session, 200, #"{"ok":true}"#, true),
        (.session, 200, #"{"ok":true,"deviceId":"d","firstSeenAt":"t","lastSeenAt":"t","extra":1}"#, false),
        (.identity, 200, #"{"endUserId":"eu_1","rebound":false}"#, false),
        (.identity, 200, #"{"endUserId":"eu_1"}"#, true),
        (.identityClear, 200, #"{"cleared":true}"#, false), (.identityClear, 200, #"{"cleared":"true"}"#, true),
        (.events, 200, "{}", true), (.events, 200, #"{ "ok" : true }"#, false), (.events, 200, #"{"ok":1}"#, true),
        (.data, 200, #"{"linkId":"l","path":"/p","params":[]}"#, true),
    ])
    func classification(_ endpoint: ContractEndpoint, _ status: Int, _ body: String, _ off: Bool) {
        #expect(AttemptClassification.isOffContract(endpoint: endpoint, status: status, body: Data(body.utf8)) == off)
    }
}
