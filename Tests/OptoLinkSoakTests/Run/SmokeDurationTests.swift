import Foundation
import OptoLink
import SoakRecords
import Testing

import OptoLinkSoak

/// Issue 8, fault 1: `Profiles/smoke.json --duration 1` against an emulator with the contract's
/// own limits (as `serve` runs it) took 46 s. In virtual time, so the bound is exact: the run
/// ends by `duration + grace`, no attempt starts at or after it, and every call it cut is
/// counted as cut, never as the backend's error.
@Suite(.timeLimit(.minutes(1)))
struct SmokeDurationTests {
    @Test("smoke.json --duration 1 with the contract's limits ends by 1 + grace 10 s, every cut call counted")
    func smokeWithADurationOfOneSecond() async throws {
        let url = ShippedProfiles.url("smoke.json")
        var text = try String(contentsOf: url, encoding: .utf8)
        // The contract's limits: drop the smoke profile's raised ones (the emulator's defaults remain).
        let raised = try #require(text.range(of: #""backend": {"#))
        let end = try #require(text[raised.upperBound...].range(of: "\n  },\n"))
        text.replaceSubrange(raised.lowerBound..<end.upperBound, with: "\"backend\": {},\n")
        let e2e = try EndToEndRun(profile: text)
        let clock = SteppingClock()
        let result = await e2e.makeVirtualRun(on: clock) { $0.duration = 1 }.execute(driving: clock)
        let summary = try #require(result.summary, "\(result.error ?? "")")
        let cutoff = 1.0 + 10.0
        #expect(summary.run.durationSeconds <= cutoff + 0.001, "\(summary.run.durationSeconds)")
        #expect(summary.run.stopReason == .deadline || summary.run.stopReason == .duration)
        let attempts = try e2e.attempts()
        #expect(!attempts.isEmpty)
        #expect(attempts.allSatisfy { $0.actualStart < cutoff }, "\(attempts.map(\.actualStart).max() ?? 0)")
        // Every journey that started is either completed or counted unfinished; the ones with a
        // `wait` step could not finish in one second, and are counted, not hidden.
        #expect(summary.journeys.started == summary.journeys.completed + summary.journeys.unfinished)
        #expect(summary.journeys.unfinished > 0)
        // Every call has an outcome; the ones the run cut are cancelled by the run, none an HTTP error.
        let calls = try e2e.calls()
        let cut = calls.filter { $0.outcome == .cancelledByRun }.count
        #expect(calls.allSatisfy { $0.outcome != .unfinished })
        let counted = ContractEndpoint.allCases.reduce(0.0) {
            $0 + (summary.metrics["\($1.rawValue).calls.cancelled_by_run"] ?? 0)
        }
        #expect(counted == Double(cut))
        #expect(summary.metrics["http.errors"] == 0)
    }
}
