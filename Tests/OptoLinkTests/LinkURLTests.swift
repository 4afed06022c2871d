import Foundation
import OptoLink
import OptoLinkTestSupport
import Testing

/// docs/CONTRACT.md §2, "handle(url:)": which URLs resolve, and how raw params decode.
@Suite(.timeLimit(.minutes(1)))
struct LinkURLTests {
    /// Handles `url` on a started instance and returns the emitted link and the transport.
    func emitted(_ url: String, deviceId: String? = nil, data: StubTransport.Reply? = nil) async throws
        -> (OptoLinkData, StubTransport)
    {
        let transport = StubTransport()
        if let data { transport.enqueue([data], for: .data) }
        let store = Fixture.launchedStore()
        if let deviceId { store.setString(deviceId, forKey: "deviceId") }
        let sdk = OptoLink(config: Fixture.config(), environment: Fixture.environment(transport, store: store))
        await sdk.start()
        var links = sdk.links.makeAsyncIterator()
        sdk.handle(url: try #require(URL(string: url)))
        let link = try #require(await links.next())
        await sdk.waitForBackgroundWork()
        return (link, transport)
    }

    @Test func nestedPercentEncodedURLInAQueryValue() async throws {
        let (link, transport) = try await emitted("myapp://open?dl=myapp%3A%2F%2Fq%3Fa%3D1%26b%3D2&c=3")
        #expect(link.params == ["dl": "myapp://q?a=1&b=2", "c": "3"])
        #expect(link.linkId == nil && link.matchMethod == .direct && !link.isDeferred)
        #expect(transport.requests(for: .data).isEmpty)
    }

    @Test func spaceAndPlusDecodeExactlyOnce() async throws {
        let (link, _) = try await emitted("myapp://open?a=x%20y&b=1%2B2&c=1+2&d=%2520")
        #expect(link.params == ["a": "x y", "b": "1+2", "c": "1+2", "d": "%20"])
    }

    @Test func nonASCIIValues() async throws {
        let (link, _) = try await emitted("myapp://open?city=Montr%C3%A9al&%C3%A9=1")
        #expect(link.params == ["city": "Montréal", "é": "1"])
    }

    @Test func anotherOrgIsEmittedRaw() async throws {
        let (link, transport) = try await emitted("https://links.acme.test/globex/hello?utm=x")
        #expect(
            link
                == OptoLinkData(
                    linkId: nil, path: "/globex/hello", params: ["utm": "x"], matchMethod: .direct, confidence: .exact,
                    isDeferred: false, score: nil))
        #expect(transport.requests(for: .data).isEmpty)
    }

    @Test func customSchemeWithoutQuery() async throws {
        let (link, _) = try await emitted("myapp://settings/profile")
        #expect(link.path == "/profile")
        #expect(link.params == nil)
    }

    @Test(arguments: [
        "http://links.acme.test/acme/welcome",  // not https
        "https://links.acme.test/acme/welcome/extra",  // too deep
        "https://links.acme.test/acme",  // no short code
    ])
    func otherShapesAreRaw(_ url: String) async throws {
        let (link, transport) = try await emitted(url)
        #expect(link.linkId == nil)
        #expect(transport.requests(for: .data).isEmpty)
    }

    @Test func universalLinkOfOurOrgResolvesOnAnyHost() async throws {
        let body = #"{"linkId":"lnk_promo","path":"/promo/summer","params":{"code":"SUMMER","ref":"mail"}}"#
        let (link, transport) = try await emitted(
            "https://go.example.org/acme/promo?opl_click=opl_x", deviceId: "dev ice+1/2", data: .status(200, body))
        #expect(
            link
                == OptoLinkData(
                    linkId: "lnk_promo", path: "/promo/summer", params: ["code": "SUMMER", "ref": "mail"],
                    matchMethod: .direct, confidence: .exact, isDeferred: false, score: nil))
        let request = try #require(transport.requests(for: .data).first?.request)
        #expect(request.method == "GET")
        #expect(request.url.absoluteString == "https://api.optolink.test/acme/promo/data?deviceId=dev%20ice%2B1%2F2")
        #expect(request.body == nil)
        #expect(request.headers["Authorization"] == nil)
        #expect(request.headers["X-API-Key"] == Fixture.apiKey)
        #expect(request.headers["X-OptoLink-SDK"] == "ios/\(OptoLinkVersion.current)")
    }

    @Test(arguments: [
        StubTransport.Reply.status(404, Fixture.notFoundEnvelope),
        .status(410, ""),
        .status(200, "<html>"),
    ])
    func failedResolutionEmitsRaw(_ reply: StubTransport.Reply) async throws {
        let (link, _) = try await emitted("https://links.acme.test/acme/expired?x=1", data: reply)
        #expect(
            link
                == OptoLinkData(
                    linkId: nil, path: "/acme/expired", params: ["x": "1"], matchMethod: .direct, confidence: .exact,
                    isDeferred: false, score: nil))
    }

    @Test func baseUrlWithPathPrefixAndTrailingSlash() async throws {
        let transport = StubTransport()
        var config = Fixture.config()
        config.baseUrl = URL(string: "https://staging.test/api/")!
        let sdk = OptoLink(config: config, environment: Fixture.environment(transport))
        try await sdk.trackEvent(name: "open")
        #expect(transport.requests.first?.request.url.absoluteString == "https://staging.test/api/sdk/events")
    }
}
