import Foundation
import OptoLink
import OptoLinkStaging
import OptoLinkTestSupport
import Testing

/// docs/CONTRACT.md §1, error table: `/data` answers 410 for a suspended org's link (the backend
/// keeps the link, the org may not serve it); §2, `handle(url:)`: the SDK emits the raw link and
/// does not retry (a 4xx other than 429).
@Suite(.timeLimit(.minutes(1)))
struct SuspendedOrgTests {
    /// The built-in fixtures with org `acme` suspended.
    static var suspendedAcme: StagingConfiguration {
        var configuration = StagingConfiguration()
        configuration.fixtures.orgs = configuration.fixtures.orgs.map { org in
            var org = org
            if org.orgKey == "acme" { org.active = false }
            return org
        }
        return configuration
    }

    @Test func aSuspendedOrgsLinkAnswers410AndIsEmittedRawWithoutARetry() async throws {
        try await withEmulator(Self.suspendedAcme) { e in
            let direct = try await e.fetch("GET", "/acme/promo/data?deviceId=dev-00000001")
            #expect(direct.status == 410)
            #expect(direct.body.contains("Organization is suspended"))

            let device = e.device()
            await device.sdk.start()
            let stream = device.sdk.links
            device.sdk.handle(url: try #require(URL(string: "https://links.acme.test/acme/promo?x=1")))
            var iterator = stream.makeAsyncIterator()
            var link = try #require(await iterator.next())
            if link.isDeferred { link = try #require(await iterator.next()) }
            #expect(link.linkId == nil, "a 410 is a failed resolution: the raw link")
            #expect(link.path == "/acme/promo")
            #expect(link.params == ["x": "1"])
            #expect(device.attempts.of(.data).map(\.status) == [410], "a 410 is not retried")
        }
    }
}
