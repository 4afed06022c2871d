import Foundation
import OptoLinkHTTP
import OptoLinkStaging
import Testing

/// docs/CONTRACT.md §4 "Fault injection", outage windows: every request to some endpoints, or to
/// every route but the admin ones, is refused or reset from second A to second B.
@Suite struct OutageTests {
    static let dataPath = "/acme/welcome/data?deviceId=device-0001"

    func harness(_ outages: [StagingOutage]) -> BackendHarness {
        var configuration = StagingConfiguration()
        configuration.faults = StagingFaults(outages: outages)
        return BackendHarness(configuration)
    }

    func isRefused(_ result: HTTPHandlerResult) -> Bool { result == .close }

    @Test func aDataOutageRefusesInsideItsWindowOnly() throws {
        let h = harness([StagingOutage(mode: .refuse, endpoints: ["data"], startSeconds: 20, endSeconds: 40)])
        #expect(try h.respond("GET", Self.dataPath).status == 200)
        h.time.advance(19.999)
        #expect(try h.respond("GET", Self.dataPath).status == 200, "before second 20")
        h.time.advance(0.001)
        #expect(h.send("GET", Self.dataPath) == .close, "second 20 is inside (inclusive)")
        h.time.advance(10)
        #expect(h.send("GET", Self.dataPath) == .close)
        #expect(try h.session("device-0001").status == 200, "other endpoints answer during a /data outage")
        #expect(try h.respond("GET", "/__admin/health").status == 200)
        h.time.advance(10)
        #expect(try h.respond("GET", Self.dataPath).status == 200, "second 40 is outside (exclusive)")
        let counters = h.backend.counters()
        #expect(counters.count("data", status: "closed") == 2)
        #expect(counters.count("data", status: "200") == 3)
        #expect(counters.faults["data"]?["outage_refuse"] == 2)
    }

    @Test func aResetOutageOfEverythingResetsEveryRouteButAdmin() throws {
        let h = harness([StagingOutage(mode: .reset, startSeconds: 0, endSeconds: 5)])
        #expect(h.send("GET", Self.dataPath) == .reset)
        #expect(h.send("POST", "/match", body: iosMatchBody()) == .reset)
        #expect(
            h.send(
                "POST", "/sdk/events",
                headers: ["Authorization": "Bearer \(BackendHarness.clientKey)"],
                body: ["deviceId": "device-0001", "eventName": "x"]) == .reset)
        #expect(h.send("GET", "/acme/welcome", headers: ["User-Agent": BackendHarness.safariUA]) == .reset)
        #expect(h.send("GET", "/.well-known/apple-app-site-association") == .reset)
        #expect(h.send("GET", "/no/such/route/here") == .reset)
        #expect(try h.respond("GET", "/__admin/counters").status == 200, "admin stays reachable")
        #expect(h.backend.counters().count("match", status: "reset") == 1)
        #expect(h.backend.counters().faults["match"]?["outage_reset"] == 1)
        h.time.advance(5)
        #expect(try h.match(iosMatchBody()).status == 201)
    }

    /// An outage answers before the limiter, keys and ledger: nothing it refused is counted or written.
    @Test func refusedRequestsWriteNothingAndUseNoRateLimit() throws {
        var configuration = StagingConfiguration()
        configuration.limits.events = StagingRateLimitRule(limit: 1, windowSeconds: 60)
        let h = BackendHarness(configuration)
        #expect(try h.session("device-0001").status == 200)
        h.backend.setFaults(
            StagingFaults(outages: [StagingOutage(mode: .refuse, endpoints: ["events"], startSeconds: 0, endSeconds: 1)]
            ))
        for _ in 0..<3 {
            #expect(
                h.send(
                    "POST", "/sdk/events", headers: ["Authorization": "Bearer \(BackendHarness.clientKey)"],
                    body: ["deviceId": "device-0001", "eventName": "x"]) == .close)
        }
        #expect(h.backend.ledger().filter { $0.endpoint == "events" }.isEmpty)
        h.time.advance(1)
        #expect(try h.event("device-0001").status == 200, "the one allowed event is still available")
    }

    /// Several windows, and per-request rules outside them, keep working.
    @Test func windowsAndRulesCombine() throws {
        var faults = StagingFaults(
            endpoints: ["data": [StagingFaultRule(kind: .errorBeforeCommit, rate: 1)]],
            outages: [
                StagingOutage(mode: .reset, endpoints: ["data"], startSeconds: 1, endSeconds: 2),
                StagingOutage(mode: .refuse, endpoints: ["data", "match"], startSeconds: 3, endSeconds: 4),
            ])
        faults.seed = 5
        let h = BackendHarness()
        h.backend.setFaults(faults)
        #expect(try h.respond("GET", Self.dataPath).status == 503, "the rule outside the windows")
        h.time.advance(1.5)
        #expect(h.send("GET", Self.dataPath) == .reset)
        h.time.advance(2)
        #expect(h.send("GET", Self.dataPath) == .close)
        #expect(h.send("POST", "/match", body: iosMatchBody()) == .close)
    }

    @Test func putFaultsStartsTheWindowsAtThePut() throws {
        let h = BackendHarness()
        h.time.advance(100)
        let body = #"{"outages":[{"mode":"refuse","endpoints":["data"],"startSeconds":2,"endSeconds":22}]}"#
        #expect(try h.respond("PUT", "/__admin/faults", rawBody: Array(body.utf8)).status == 200)
        #expect(try h.respond("GET", Self.dataPath).status == 200, "second 0 after the PUT")
        h.time.advance(2)
        #expect(h.send("GET", Self.dataPath) == .close)
        let listed = try JSONDecoder().decode(
            StagingFaults.self, from: Data(try h.respond("GET", "/__admin/faults").body))
        #expect(listed.outages == [StagingOutage(mode: .refuse, endpoints: ["data"], startSeconds: 2, endSeconds: 22)])
    }

    @Test func theWindowsCanBeCountedFromAnotherOrigin() throws {
        let h = harness([StagingOutage(mode: .refuse, endpoints: ["data"], startSeconds: 10, endSeconds: 20)])
        h.time.advance(12)
        #expect(h.send("GET", Self.dataPath) == .close)
        h.backend.startOutageWindows(at: h.time.now - 5)
        #expect(try h.respond("GET", Self.dataPath).status == 200, "second 5 of the new origin")
        h.time.advance(5)
        #expect(h.send("GET", Self.dataPath) == .close)
    }

    @Test(arguments: [
        (#"{"outages":[{"mode":"refuse","startSeconds":20,"endSeconds":10}]}"#, "outages[0].endSeconds"),
        (#"{"outages":[{"mode":"refuse","startSeconds":-1,"endSeconds":10}]}"#, "outages[0].startSeconds"),
        (
            #"{"outages":[{"mode":"refuse","endpoints":["dta"],"startSeconds":0,"endSeconds":1}]}"#,
            "unknown endpoint 'dta'"
        ),
        (
            #"{"outages":[{"mode":"refuse","endpoints":["admin"],"startSeconds":0,"endSeconds":1}]}"#,
            "unknown endpoint 'admin'"
        ),
        (
            #"{"outages":[{"mode":"refuse","endpoints":[],"startSeconds":0,"endSeconds":1}]}"#,
            "outages[0].endpoints: empty"
        ),
        (#"{"outages":[{"mode":"drop","startSeconds":0,"endSeconds":1}]}"#, #"unknown value \"drop\""#),
        (
            #"{"outages":[{"mode":"reset","from":0,"endSeconds":1}]}"#,
            "outages[0].from: unknown field (expected one of mode, endpoints, startSeconds, endSeconds)"
        ),
    ])
    func badOutagesAreRefusedNamingTheField(body: String, mentions: String) throws {
        let h = BackendHarness()
        let response = try h.respond("PUT", "/__admin/faults", rawBody: Array(body.utf8))
        #expect(response.status == 400)
        #expect(response.text.contains(mentions), "\(response.text)")
        #expect(h.backend.currentFaults().outages.isEmpty, "nothing applied")
    }

    @Test func aConfigurationFileSetsAnOutageFromTheStart() throws {
        let json = #"{"faults":{"outages":[{"mode":"reset","endpoints":["data"],"startSeconds":0,"endSeconds":30}]}}"#
        let configuration = try StagingConfiguration.decode(Data(json.utf8), source: "x.json")
        #expect(configuration.faults.outages.first?.mode == .reset)
        let h = BackendHarness(configuration)
        #expect(h.send("GET", Self.dataPath) == .reset)
        #expect {
            try StagingConfiguration.decode(
                Data(#"{"faults":{"outages":[{"mode":"reset","startSeconds":5,"endSeconds":5}]}}"#.utf8),
                source: "x.json")
        } throws: { error in
            ((error as? StagingConfigurationError)?.message ?? "").contains("faults.outages[0].endSeconds")
        }
    }
}
