import Foundation
import OptoLink
import OptoLinkStaging
import OptoLinkTestSupport
import Synchronization
import Testing

import OptoLinkSoak
import SoakRecords
import SoakVerdicts

/// Calls nobody closes in time (issue 12, the streaming reconciliation's false `session.lost` /
/// `session.unexpected`): a fire-and-forget call, or an awaited one whose close comes late, is
/// closed by the recorder a contract back-off plus a margin after its last attempt, so its row
/// reaches the live passes within their horizon, and the live verdicts equal the in-memory ones.
/// Virtual time throughout (a ``ManualClock`` drives the run's timeline).
@Suite struct QuietCallTests {
    static let epoch = 1_790_000_000.0
    static let horizon = 30.0

    /// A recorder on a virtual clock with a live, streamed ledger and a short horizon.
    final class Harness: Sendable {
        let clock = ManualClock()
        let directory: URL
        let recorder: SoakRecorder
        let ledger = Mutex<[LedgerRow]>([])

        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("quiet-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            recorder = try SoakRecorder(
                directory: directory, timeline: RunTimeline(clock: clock, epoch: QuietCallTests.epoch),
                verdictContext: VerdictContext(
                    maxRetries: 2, ledgerStreamed: true, ledgerLive: true, horizonSeconds: QuietCallTests.horizon))
        }

        deinit { try? FileManager.default.removeItem(at: directory) }

        var now: Double { recorder.timeline.now() }

        /// Moves the virtual clock to run second `t`.
        func at(_ t: Double) {
            let step = t - now
            if step > 0 { clock.advance(by: .nanoseconds(Int64((step * 1e9).rounded()))) }
        }

        /// One attempt of `duration` seconds through the recording middleware, answered `status`
        /// (`nil`: a time-out); a 2xx write stores a ledger row halfway through.
        func attempt(
            _ label: String, _ endpoint: OptoLinkEndpoint, call: UInt64, number: Int = 1, status: Int?,
            deviceId: String, corr: String? = nil, duration: Double = 0.03
        ) async {
            let body = corr.map { #"{"eventName":"e","properties":{"opl_corr":"\#($0)"}}"# } ?? "{}"
            let request = OptoLinkHTTPRequest(
                method: "POST", url: URL(string: "http://127.0.0.1:1/sdk/\(endpoint.rawValue)")!, headers: [:],
                body: Data(body.utf8))
            let context = OptoLinkRequestContext(
                endpoint: endpoint, callId: call, attempt: number, instanceLabel: label, timeout: .seconds(10))
            _ = try? await recorder.intercept(request, context: context) { _, _ in
                self.at(self.now + duration / 2)
                if let status, (200..<300).contains(status), endpoint.retryClass != .repeatSafe {
                    let entry = LedgerRow(
                        sequence: self.ledger.withLock { $0.count + 1 }, arrivedAt: QuietCallTests.epoch + self.now,
                        endpoint: endpoint.rawValue, deviceId: deviceId, apiKeySuffix: "client",
                        eventName: corr == nil ? nil : "e", properties: corr.map { ["opl_corr": $0] })
                    self.ledger.withLock { $0.append(entry) }
                    self.recorder.ledgerRecorded(entry)
                }
                self.at(self.now + duration / 2)
                guard let status else { throw URLError(.timedOut) }
                return OptoLinkHTTPResponse(status: status)
            }
        }

        /// Background traffic from `d9`: one awaited, stored event per second from `from` to `to`
        /// (it moves the stream's time on, as the rest of a run does).
        func traffic(from: Int, to: Int) async {
            recorder.deviceIdRecorded(device: "d9", launch: 1, deviceId: "id-d9")
            for second in from..<to {
                at(Double(second))
                let call = UInt64(1000 + second)
                await attempt("d9#1", .events, call: call, status: 200, deviceId: "id-d9", corr: "run1:d9:\(second)")
                recorder.closeCalls(DeviceLaunch(device: "d9", launch: 1), callIds: [call], outcome: .ok)
            }
        }

        /// Finishes the run; returns the live report and the report of the same CSVs and ledger
        /// judged in memory (infinite horizon).
        func reports() throws -> (live: VerdictsReport, inMemory: VerdictsReport, calls: [CallRecord]) {
            recorder.finish()
            let live = recorder.finishVerdicts()
            let attempts = try ReportCSVReader.attempts(directory.appendingPathComponent("attempts.csv"))
            let calls = try ReportCSVReader.calls(directory.appendingPathComponent("calls.csv"))
            let inMemory = Verdicts.evaluate(
                VerdictInputs(
                    attempts: attempts, calls: calls, ledger: ledger.withLock { $0 }, attribution: [],
                    configuration: VerdictsConfiguration(), maxRetries: 2, runStartEpoch: QuietCallTests.epoch))
            return (live, inMemory, calls)
        }
    }

    @Test("a session check-in whose launch stays open 4 horizons: 0 lost, 0 unexpected, same verdicts as in memory")
    func lateLaunchCloseOfASession() async throws {
        let run = try Harness()
        run.recorder.deviceIdRecorded(device: "d1", launch: 1, deviceId: "id-d1")
        run.at(1)
        await run.attempt("d1#1", .session, call: 2, status: 200, deviceId: "id-d1")
        await run.traffic(from: 2, to: 120)
        // The launch ends long after its check-in: the defect's case (closed with the launch).
        #expect(run.recorder.callsCSV.rowCount > 118, "the check-in's row was written before its launch ended")
        run.recorder.closeCalls(DeviceLaunch(device: "d1", launch: 1), callIds: nil, outcome: nil)
        let (live, inMemory, calls) = try run.reports()
        let session = try #require(live.reconciliation.endpoints["session"])
        #expect(session.deliveredOnce == 1 && session.lost == 0 && session.unexpected == 0, "\(session)")
        let checkIn = try #require(calls.first { $0.endpoint == .session })
        #expect(checkIn.outcome == .ok && checkIn.attempts == 1 && checkIn.deviceId == "id-d1")
        #expect(live.reconciliation.endpoints["events"]?.deliveredOnce == 118)
        #expect(live == inMemory)
    }

    @Test("a retried link resolution and an event whose close comes late: one call each, judged within the horizon")
    func lateCloseOfARetriedResolutionAndAnEvent() async throws {
        let run = try Harness()
        run.recorder.deviceIdRecorded(device: "d2", launch: 1, deviceId: "id-d2")
        run.at(1)
        // A `/data` resolution (fire-and-forget): 503, then the retry 0.5 s later succeeds.
        await run.attempt("d2#1", .data, call: 3, status: 503, deviceId: "id-d2")
        run.at(run.now + 0.5)
        await run.attempt("d2#1", .data, call: 3, number: 2, status: 200, deviceId: "id-d2")
        // An event whose public call returned, but whose close the runner made only at the launch's end.
        run.at(2)
        await run.attempt("d2#1", .events, call: 4, status: 200, deviceId: "id-d2", corr: "run1:d2:4")
        await run.traffic(from: 3, to: 130)
        run.recorder.closeCalls(DeviceLaunch(device: "d2", launch: 1), callIds: nil, outcome: nil)
        let (live, inMemory, calls) = try run.reports()
        let resolution = try #require(calls.first { $0.endpoint == .data })
        #expect(resolution.attempts == 2 && resolution.outcome == .ok, "the retry stayed in its call")
        #expect(calls.filter { $0.device == "d2" }.count == 2)
        #expect(live.retries.violations == 0 && live.retries.calls == calls.count)
        #expect(live.backoff.exponential.checked == 1 && live.backoff.exponential.onTime == 1)
        let events = try #require(live.reconciliation.endpoints["events"])
        #expect(events.deliveredOnce == 128 && events.lost == 0 && events.unexpected == 0, "\(events)")
        #expect(live == inMemory)
    }

    @Test("a retried session is one retried_session violation whether the retry comes at once or after a minute")
    func retriedSessionStaysDetected() async throws {
        let run = try Harness()
        run.recorder.deviceIdRecorded(device: "d3", launch: 1, deviceId: "id-d3")
        run.at(1)
        // A session retried 0.5 s after its 503 (within the quiet deadline: one call of 2 attempts) …
        await run.attempt("d3#1", .session, call: 2, status: 503, deviceId: "id-d3")
        run.at(run.now + 0.5)
        await run.attempt("d3#1", .session, call: 2, number: 2, status: 200, deviceId: "id-d3")
        // … and one retried 60 s later, after the recorder had closed it: two rows, still one retry.
        run.recorder.deviceIdRecorded(device: "d4", launch: 1, deviceId: "id-d4")
        run.at(2)
        await run.attempt("d4#1", .session, call: 2, status: nil, deviceId: "id-d4")
        await run.traffic(from: 3, to: 62)
        await run.attempt("d4#1", .session, call: 2, number: 2, status: 200, deviceId: "id-d4")
        await run.traffic(from: 63, to: 100)
        run.recorder.closeCalls(DeviceLaunch(device: "d3", launch: 1), callIds: nil, outcome: nil)
        run.recorder.closeCalls(DeviceLaunch(device: "d4", launch: 1), callIds: nil, outcome: nil)
        let (live, inMemory, calls) = try run.reports()
        #expect(calls.filter { $0.device == "d3" }.map(\.attempts) == [2])
        #expect(calls.filter { $0.device == "d4" }.count == 2)
        #expect(live.retries.violationsByKind[RetryMatrixVerdict.Kind.retriedSession.rawValue] == 2)
        #expect(live.retries.violations == 2)
        let session = try #require(live.reconciliation.endpoints["session"])
        #expect(session.lost == 0 && session.unexpected == 0, "\(session)")
        #expect(live == inMemory)
    }

    @Test("the quiet deadline: the contract's back-off (a 429's N, else the 5 s cap) plus the margin")
    func quietDeadline() {
        func record(status: Int?, retryAfter: Int?) -> AttemptRecord {
            AttemptRecord(
                device: "d", launch: 1, callId: 1, endpoint: .data, attempt: 1, intendedStart: 10, actualStart: 10,
                end: 10, status: status, errorKind: nil, retryAfterSeconds: retryAfter, requestBytes: 0,
                responseBytes: 0, correlationId: nil, clientIP: nil)
        }
        #expect(CallTracker.quietCloseDeadline(after: record(status: 200, retryAfter: nil), margin: 10) == 25)
        #expect(CallTracker.quietCloseDeadline(after: record(status: 429, retryAfter: 40), margin: 10) == 60)
        #expect(CallTracker.quietCloseDeadline(after: record(status: 429, retryAfter: 1), margin: 3) == 18)
    }
}

extension QuietCallTests {
    @Test(
        "the horizon covers the longest call plus the quiet close after it",
        arguments: [(10.0, 2, 60.0), (10, 0, 60), (2, 2, 6), (30, 5, 3_600), (0.5, 1, 2)])
    func horizonCoversTheQuietClose(timeout: Double, maxRetries: Int, window: Double) {
        let horizon = VerdictContext.horizon(timeout: timeout, maxRetries: maxRetries, longestWindow: window)
        // Worst case: every attempt times out and every back-off is a 429's N (at most the window).
        let longestBackoff = max(5, window)
        let longestCall = Double(maxRetries + 1) * timeout + Double(maxRetries) * longestBackoff
        let last = AttemptRecord(
            device: "d", launch: 1, callId: 1, endpoint: .session, attempt: maxRetries + 1, intendedStart: 0,
            actualStart: longestCall - timeout, end: longestCall, status: 429, errorKind: nil,
            retryAfterSeconds: Int(window), requestBytes: 0, responseBytes: 0, correlationId: nil, clientIP: nil)
        // The sweep runs at most a second late.
        let written = CallTracker.quietCloseDeadline(after: last, margin: 10) + 1
        #expect(written <= horizon, "row written at \(written) s, horizon \(horizon) s")
    }
}
