import Foundation
import OptoLinkHTTP
import OptoLinkStaging
import Testing

/// docs/CONTRACT.md §5 (AASA by Host) and the admin routes.
@Suite struct AASAAndAdminTests {
    let h = BackendHarness()

    @Test func customHostGetsItsOrgAloneWithWebcredentials() throws {
        let response = try h.respond(
            "GET", "/.well-known/apple-app-site-association", headers: ["Host": "links.acme.test:8443"])
        #expect(response.status == 200)
        #expect(response.headers["Content-Type"] == "application/json")
        #expect(response.headers["Cache-Control"] == "public, max-age=3600")
        #expect(
            response.text
                == #"{"applinks":{"details":[{"appIDs":["TEAM123456.com.example.acme"],"components":[{"/":"/acme/*"}]}]},"webcredentials":{"apps":["TEAM123456.com.example.acme"]}}"#
        )
    }

    @Test func defaultHostAggregatesActiveOrgsWithTeamIds() throws {
        var fixtures = StagingFixtures.default
        fixtures.orgs.append(
            StagingOrg(orgKey: "initech", ios: StagingIOSApp(teamId: "TEAM999999", bundleId: "com.initech.app")))
        fixtures.orgs.append(
            StagingOrg(orgKey: "umbrella", active: false, ios: StagingIOSApp(teamId: "TEAM000000", bundleId: "com.u")))
        let h = BackendHarness(StagingConfiguration(fixtures: fixtures))
        let body = try h.respond("GET", "/.well-known/apple-app-site-association", headers: ["Host": "127.0.0.1:8080"])
            .json()
        let details = try #require((body["applinks"] as? [String: Any])?["details"] as? [[String: Any]])
        #expect(
            details.compactMap { ($0["appIDs"] as? [String])?.first } == [
                "TEAM123456.com.example.acme", "TEAM999999.com.initech.app",
            ])
        #expect(body["webcredentials"] == nil)
    }

    @Test func noAppConfigAnywhereIs404() throws {
        let h = BackendHarness(StagingConfiguration(fixtures: StagingFixtures(orgs: [StagingFixtures.default.orgs[1]])))
        let response = try h.respond("GET", "/.well-known/apple-app-site-association")
        #expect(response.status == 404)
        #expect(try response.message() == "No iOS app configuration")
    }

    @Test func adminLedgerCountersAndFaults() throws {
        _ = try h.session("device-0001")
        _ = try h.event("device-0001", "open", properties: ["opl_corr": "r:1:1"])
        let ledger = try JSONDecoder().decode(
            [StagingLedgerEntry].self, from: Data(try h.respond("GET", "/__admin/ledger").body))
        #expect(ledger == h.backend.ledger())
        #expect(ledger.count == 2)
        let page = try JSONDecoder().decode(
            [StagingLedgerEntry].self, from: Data(try h.respond("GET", "/__admin/ledger?since=1&limit=5").body))
        #expect(page.map(\.sequence) == [2])
        #expect(h.backend.ledger(since: 0, limit: 1).map(\.sequence) == [1])
        #expect(h.backend.ledger(since: 9).isEmpty)
        // A value that is not a whole number ≥ 0 is refused, not read as 0 (which gave the whole ledger).
        for query in ["since=-4", "limit=99999999999999999999", "after=x", "since=1e3", "limit=-1"] {
            #expect(try h.respond("GET", "/__admin/ledger?\(query)").status == 400, "\(query)")
        }
        #expect(
            try h.respond("GET", "/__admin/ledger?since=9223372036854775807&limit=9223372036854775807").body
                == Array("[]".utf8))
        let counters = try JSONDecoder().decode(
            StagingCounters.self, from: Data(try h.respond("GET", "/__admin/counters").body))
        #expect(counters.count("session", status: "200") == 1)
        #expect(counters.count("events", status: "200") == 1)

        let put = try h.respond(
            "PUT", "/__admin/faults",
            rawBody: Array(#"{"seed":3,"endpoints":{"events":[{"kind":"html_502","rate":1}]}}"#.utf8))
        #expect(put.status == 200)
        #expect(try h.event("device-0001").status == 502)
        let bad = try h.respond(
            "PUT", "/__admin/faults", rawBody: Array(#"{"endpoints":{"events":[{"kind":"meteor","rate":1}]}}"#.utf8))
        #expect(bad.status == 400)
        #expect(h.backend.currentFaults().seed == 3)

        let limits = try h.respond(
            "PUT", "/__admin/limits", rawBody: Array(#"{"match":{"limit":1,"windowSeconds":2}}"#.utf8))
        #expect(limits.status == 200)
        _ = try h.match(iosMatchBody())
        #expect(try h.match(iosMatchBody()).status == 429)

        #expect(try h.respond("POST", "/__admin/reset").status == 200)
        #expect(h.backend.ledger().isEmpty)
        #expect(try h.match(iosMatchBody()).status == 201)
    }
}
