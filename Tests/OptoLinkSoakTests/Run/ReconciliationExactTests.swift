import Foundation
import OptoLink
import OptoLinkStaging
import Testing

import OptoLinkSoak
import SoakRecords
import SoakVerdicts
import SoakTestSupport

/// Exactly one reconciliation outcome per call (issue 9, fault 1): devices running several
/// journeys, reinstalls with a new `deviceId`, both copies of a retried write landing, and
/// hostile event property keys.
@Suite struct ReconciliationExactTests {
    /// A write call of `device`'s `launch` spanning `start…end` run seconds.
    static func call(
        _ endpoint: ContractEndpoint, device: String = "d1", launch: Int, call: UInt64, start: Double, end: Double,
        outcome: CallOutcome = .ok, attempts: Int = 1, corr: String? = nil
    ) -> CallRecord {
        CallRecord(
            device: device, launch: launch, callId: call, endpoint: endpoint, attempts: attempts, intendedStart: start,
            start: start, end: end, outcome: outcome, finalStatus: outcome == .ok ? 200 : nil, correlationId: corr)
    }

    static let runStart = 1_000_000.0

    static func row(_ endpoint: String, _ deviceId: String, at time: Double, corr: String? = nil) -> LedgerRow {
        Fixture.ledger(endpoint, deviceId: deviceId, corr: corr, at: runStart + time)
    }

    static func reconcile(_ calls: [CallRecord], _ ledger: [LedgerRow], launches: [DeviceLaunch: String])
        -> ReconciliationVerdict
    {
        ReconciliationVerdict.evaluate(
            calls: calls, ledger: ledger, deviceIds: [:], runStartEpoch: runStart, edgeToleranceSeconds: 0.01,
            launchDeviceIds: launches)
    }

    static func outcomes(_ counts: ReconciliationVerdict.EndpointCounts) -> Int {
        ReconcileOutcome.allCases.reduce(0) { $0 + counts[$1] }
    }

    @Test("a device with several journeys and a reinstall joins each launch on its own deviceId")
    func multiJourneyAndReinstall() throws {
        // Launch 1 (install A), launch 2 (relaunch, still A), launch 3 (reinstall: B), launch 4 (relaunch B).
        let launches = [
            DeviceLaunch(device: "d1", launch: 1): "uuid-A", DeviceLaunch(device: "d1", launch: 2): "uuid-A",
            DeviceLaunch(device: "d1", launch: 3): "uuid-B", DeviceLaunch(device: "d1", launch: 4): "uuid-B",
        ]
        let calls = [
            Self.call(.session, launch: 1, call: 1, start: 1.0, end: 1.01),
            Self.call(.identity, launch: 1, call: 2, start: 1.1, end: 1.11),
            Self.call(.session, launch: 2, call: 1, start: 2.0, end: 2.01),
            Self.call(.session, launch: 3, call: 1, start: 3.0, end: 3.01),
            Self.call(.identity, launch: 3, call: 2, start: 3.1, end: 3.11),
            Self.call(.identityClear, launch: 4, call: 1, start: 4.0, end: 4.01),
        ]
        let ledger = [
            Self.row("session", "uuid-A", at: 1.005), Self.row("identity", "uuid-A", at: 1.105),
            Self.row("session", "uuid-A", at: 2.005), Self.row("session", "uuid-B", at: 3.005),
            Self.row("identity", "uuid-B", at: 3.105), Self.row("identity_clear", "uuid-B", at: 4.005),
        ]
        let verdict = Self.reconcile(calls, ledger, launches: launches)
        for (name, expected) in [("session", 3), ("identity", 2), ("identity_clear", 1)] {
            let counts = try #require(verdict.endpoints[name])
            #expect(counts.deliveredOnce == expected, "\(name)")
            #expect(counts.lost + counts.duplicated + counts.unexpected == 0, "\(name)")
            #expect(counts.joinedBy == "device")
        }
        #expect(verdict.ignoredLedgerEntries == 0)
    }

    @Test("a failed call and a delivered one close together: the row goes to the call whose span holds it")
    func closeCallsSplitBySpan() throws {
        let launches = [DeviceLaunch(device: "d1", launch: 1): "uuid-A"]
        let calls = [
            Self.call(.identity, launch: 1, call: 1, start: 1.00, end: 1.05, outcome: .apiError),
            Self.call(.identity, launch: 1, call: 2, start: 1.10, end: 1.15),
        ]
        let counts = try #require(
            Self.reconcile(calls, [Self.row("identity", "uuid-A", at: 1.12)], launches: launches).endpoints["identity"])
        #expect(counts.deliveredOnce == 1)
        #expect(counts.notDelivered == 1)
        #expect(counts.lost + counts.landedUnknown == 0)
    }

    @Test("two launches of one install: a lost write and a delivered one are told apart by time")
    func sameDeviceIdSplitByTime() throws {
        let launches = [
            DeviceLaunch(device: "d1", launch: 1): "uuid-A", DeviceLaunch(device: "d1", launch: 2): "uuid-A",
        ]
        let calls = [
            Self.call(.session, launch: 1, call: 1, start: 1.0, end: 1.01),
            Self.call(.session, launch: 2, call: 1, start: 5.0, end: 5.01),
        ]
        let counts = try #require(
            Self.reconcile(calls, [Self.row("session", "uuid-A", at: 5.004)], launches: launches).endpoints["session"])
        #expect(counts.deliveredOnce == 1)
        #expect(counts.lost == 1)
        #expect(Self.outcomes(counts) == counts.calls)
    }

    @Test("both copies of a retried write landing are one call, duplicated — never also delivered once")
    func retriedWriteBothCopiesLanded() throws {
        let launches = (1...35).reduce(into: [DeviceLaunch: String]()) {
            $0[DeviceLaunch(device: "d\($1)", launch: 1)] = "uuid-\($1)"
        }
        var calls: [CallRecord] = []
        var ledger: [LedgerRow] = []
        for index in 1...35 {
            // Attempt 1 timed out after the server stored it; attempt 2 stored it again and returned 200.
            calls.append(Self.call(.identity, device: "d\(index)", launch: 1, call: 1, start: 1, end: 7, attempts: 2))
            ledger.append(Self.row("identity", "uuid-\(index)", at: 1.01))
            ledger.append(Self.row("identity", "uuid-\(index)", at: 6.5))
        }
        // The same kind for events, joined by correlation id.
        calls.append(Self.call(.events, launch: 1, call: 9, start: 1, end: 7, attempts: 2, corr: "r:d1:9"))
        ledger += [
            Self.row("events", "uuid-1", at: 1.01, corr: "r:d1:9"),
            Self.row("events", "uuid-1", at: 6.5, corr: "r:d1:9"),
        ]
        let verdict = Self.reconcile(calls, ledger, launches: launches)
        let identity = try #require(verdict.endpoints["identity"])
        #expect(identity.calls == 35)
        #expect(Self.outcomes(identity) == 35)
        #expect(identity.duplicated == 35)
        #expect(identity.duplicateWrites == 35)
        #expect(identity.deliveredOnce == 0)
        let events = try #require(verdict.endpoints["events"])
        #expect(events.calls == 1 && events.duplicated == 1 && events.deliveredOnce == 0)
    }

    @Test(
        "the correlation id is read from parsed JSON: hostile keys and values cannot steal it",
        arguments: [
            #"{"deviceId":"x","eventName":"e","properties":{"a\"opl_corr":"x,y","opl_corr":"run:d1:5"}}"#,
            #"{"deviceId":"x","eventName":"e","properties":{"opl_corr":"run:d1:5","a\"opl_corr":"x,y"}}"#,
            #"{"deviceId":"x","eventName":"e","properties":{"note":"\"opl_corr\":\"fake:d9:9\"","opl_corr":"run:d1:5"}}"#,
            #"{"eventName":"\"opl_corr\":\"evil:d:1\"","deviceId":"x","properties":{"opl_corr":"run:d1:5"}}"#,
        ])
    func hostilePropertyKeys(body: String) {
        #expect(AttemptClassification.correlationId(endpoint: .events, body: Data(body.utf8)) == "run:d1:5")
    }

    @Test("a body without opl_corr, or not JSON, has no correlation id")
    func noCorrelationId() {
        #expect(
            AttemptClassification.correlationId(
                endpoint: .events, body: Data(#"{"properties":{"a\"opl_corr":"x"}}"#.utf8)) == nil)
        #expect(AttemptClassification.correlationId(endpoint: .events, body: Data("opl_corr".utf8)) == nil)
        #expect(
            AttemptClassification.correlationId(
                endpoint: .session, body: Data(#"{"properties":{"opl_corr":"r:d:1"}}"#.utf8)) == nil)
    }
}

/// The same faults through the whole tool against the embedded emulator.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct ReconciliationEndToEndTests {
    @Test("few devices, many journeys each (reinstalls, relaunches) and a hostile property key: 0 lost, 0 duplicated")
    func fewDevicesManyJourneys() async throws {
        let steps = """
            {"kind": "firstLaunch"}, {"kind": "identify", "externalId": "u-{device}"},
            {"kind": "event", "name": "e", "properties": {"a\\"opl_corr": "x,y", "k": "v"}, "repeat": 2},
            {"kind": "wait", "seconds": 0.5}, {"kind": "relaunch"}, {"kind": "clearIdentity"}, {"kind": "event", "name": "f"}
            """
        let run = try EndToEndRun(
            profile: e2eProfile(
                devices: 4, rate: 10, steps: steps,
                thresholds: #"["reconcile.lost == 0", "reconcile.duplicated == 0"]"#,
                load:
                    #"{"model": "open", "startRate": 10, "stages": [{"duration": 2, "target": 10}], "iterations": 16, "grace": 10}"#
            ))
        let result = await run.makeRun().execute()
        let summary = try #require(result.summary, "\(result.error ?? "")")
        let verdicts = try #require(summary.verdicts)
        let calls = try run.calls()
        // A duplicate needs a retried call whose copies both landed (a timeout on a loaded machine);
        // without retries the run must pass.
        let retried = calls.filter { $0.attempts > 1 }.count
        for endpoint in ["events", "session", "identity", "identity_clear"] {
            let counts = try #require(verdicts.reconciliation.endpoints[endpoint])
            let made = calls.filter { $0.endpoint.rawValue == endpoint }.count
            #expect(counts.calls == made, "\(endpoint)")
            #expect(
                ReconcileOutcome.allCases.reduce(0) { $0 + counts[$1] } == made, "\(endpoint): one outcome per call")
            #expect(counts.lost == 0, "\(endpoint): \(counts)")
            #expect(counts.duplicated <= calls.filter { $0.endpoint.rawValue == endpoint && $0.attempts > 1 }.count)
        }
        if retried == 0 { #expect(result.exitCode == 0, "\(summary.thresholds.map(\.line))") }
        #expect(Set(calls.compactMap(\.deviceId)).count >= 8, "reinstalls use new deviceIds")
        #expect((summary.journeys.waitedForDevice ?? 0) > 0)
    }
}
