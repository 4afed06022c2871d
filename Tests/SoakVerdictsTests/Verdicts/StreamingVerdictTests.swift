import Foundation
import Testing

import SoakRecords
import SoakVerdicts

/// The verdicts in bounded memory (issue 12): the passes give the same report whether they keep
/// everything to the end (the in-memory path: a horizon of infinity, the ledger up front) or
/// prune past a horizon as the stream goes (the recorder's live path), and what they hold stays
/// flat however long the stream is.
@Suite struct StreamingVerdictTests {
    static let epoch = 1_790_000_000.0
    static let runId = "run1"

    /// A deterministic synthetic run of `seconds` at `perSecond` calls/s: events (some 5xx after
    /// commit then retried, some lost), session writes, `/match` through a per-IP fixed window
    /// (429s with their N), a few reinstalls, attribution records, and the server's ledger rows.
    struct SyntheticRun {
        var attempts: [AttemptRecord] = []
        var calls: [CallRecord] = []
        var ledger: [LedgerRow] = []
        var attribution: [AttributionRecord] = []

        init(seconds: Int, perSecond: Int) {
            var callId: UInt64 = 0
            var sequence = 0
            var windows: [String: (start: Double, hits: Int)] = [:]
            func row(_ time: Double, _ endpoint: String, _ deviceId: String, corr: String? = nil) {
                sequence += 1
                ledger.append(
                    LedgerRow(
                        sequence: sequence, arrivedAt: StreamingVerdictTests.epoch + time, endpoint: endpoint,
                        deviceId: deviceId, apiKeySuffix: "client", eventName: corr == nil ? nil : "purchase",
                        properties: corr.map { ["opl_corr": $0] }))
            }
            for second in 0..<seconds {
                for slot in 0..<perSecond {
                    callId += 1
                    let n = Int(callId)
                    let device = "d\(n % 40)"
                    let launch = 1 + (n / 400) % 3  // a reinstall every so often: a new deviceId
                    let deviceId = "id-\(device)-\(launch)"
                    let t = Double(second) + Double(slot) / Double(perSecond)
                    func attempt(
                        _ endpoint: ContractEndpoint, _ number: Int, _ start: Double, _ end: Double, _ status: Int?,
                        retryAfter: Int? = nil, corr: String? = nil, ip: String? = nil
                    ) -> AttemptRecord {
                        AttemptRecord(
                            device: device, launch: launch, callId: callId, endpoint: endpoint, attempt: number,
                            intendedStart: start, actualStart: start, end: end, status: status,
                            errorKind: status == nil ? .timedOut : nil, retryAfterSeconds: retryAfter, requestBytes: 10,
                            responseBytes: 10, correlationId: corr, clientIP: ip)
                    }
                    func call(
                        _ endpoint: ContractEndpoint, _ count: Int, _ end: Double, ok: Bool, status: Int?, corr: String?
                    ) {
                        calls.append(
                            CallRecord(
                                device: device, launch: launch, callId: callId, endpoint: endpoint, attempts: count,
                                intendedStart: t, start: t, end: end, outcome: ok ? .ok : .apiError,
                                finalStatus: status,
                                correlationId: corr, deviceId: deviceId))
                    }
                    switch n % 10 {
                    case 0, 1, 2, 3, 4, 5:
                        let corr = "\(StreamingVerdictTests.runId):\(device):\(n)"
                        if n % 23 == 0 {
                            // A timeout after the commit, then a retry that lands again: duplicated.
                            attempts.append(attempt(.events, 1, t, t + 0.02, nil, corr: corr))
                            row(t + 0.01, "events", deviceId, corr: corr)
                            attempts.append(attempt(.events, 2, t + 1.02, t + 1.05, 200, corr: corr))
                            row(t + 1.03, "events", deviceId, corr: corr)
                            call(.events, 2, t + 1.05, ok: true, status: 200, corr: corr)
                        } else if n % 97 == 0 {
                            // Success the server never stored: lost.
                            attempts.append(attempt(.events, 1, t, t + 0.02, 200, corr: corr))
                            call(.events, 1, t + 0.02, ok: true, status: 200, corr: corr)
                        } else if n % 61 == 0 {
                            // A timeout whose write still landed: landed unknown.
                            attempts.append(attempt(.events, 1, t, t + 0.5, nil, corr: corr))
                            row(t + 0.3, "events", deviceId, corr: corr)
                            call(.events, 1, t + 0.5, ok: false, status: nil, corr: corr)
                        } else {
                            attempts.append(attempt(.events, 1, t, t + 0.02, 200, corr: corr))
                            row(t + 0.01, "events", deviceId, corr: corr)
                            call(.events, 1, t + 0.02, ok: true, status: 200, corr: corr)
                        }
                    case 6, 7:
                        attempts.append(attempt(.session, 1, t, t + 0.03, 200))
                        if n % 89 != 0 { row(t + 0.015, "session", deviceId) }
                        call(.session, 1, t + 0.03, ok: true, status: 200, corr: nil)
                    default:
                        // /match from one of 2 IPs, 8 per 10 s window each.
                        let ip = "10.0.0.\(n % 20 / 10)"
                        var window = windows[ip] ?? (t, 0)
                        if t >= window.start + 10 { window = (t, 0) }
                        window.hits += 1
                        windows[ip] = window
                        let limited = window.hits > 8
                        let n429 = Int((window.start + 10 - t).rounded(.up))
                        attempts.append(
                            attempt(
                                .match, 1, t, t + 0.01, limited ? 429 : 201, retryAfter: limited ? max(1, n429) : nil,
                                ip: ip))
                        call(.match, 1, t + 0.01, ok: !limited, status: limited ? 429 : 201, corr: nil)
                        if n % 50 == 8 {
                            attribution.append(
                                AttributionRecord(
                                    device: device, clickedLinkId: "l1", emittedLinkId: limited ? nil : "l1",
                                    matchMethod: limited ? nil : "CLIPBOARD", sharedNAT: n % 3 == 0))
                        }
                    }
                }
            }
            // Another run's row, and a write no call made: ignored and unexpected.
            sequence += 1
            ledger.append(
                LedgerRow(
                    sequence: sequence, arrivedAt: StreamingVerdictTests.epoch + 5, endpoint: "events",
                    deviceId: "x", apiKeySuffix: "client", properties: ["opl_corr": "other:d1:1"]))
            row(7, "events", "id-d1-1", corr: "\(StreamingVerdictTests.runId):d1:999999")
            ledger.sort { $0.arrivedAt < $1.arrivedAt }
        }

        /// Attempts, calls and ledger rows merged in stream time (the order the recorder sees them live).
        var stream: [RunRecord] {
            let records = Verdicts.timeOrdered(attempts: attempts, calls: calls, attribution: attribution)
            var merged: [RunRecord] = []
            var next = 0
            for record in records {
                if let time = record.streamTime(runStartEpoch: StreamingVerdictTests.epoch) {
                    while next < ledger.count, ledger[next].arrivedAt - StreamingVerdictTests.epoch <= time {
                        merged.append(.ledger(ledger[next]))
                        next += 1
                    }
                }
                merged.append(record)
            }
            return merged + ledger[next...].map(RunRecord.ledger)
        }
    }

    static var configuration: VerdictsConfiguration {
        var configuration = VerdictsConfiguration()
        configuration.limits = ["match": (try? DeclaredLimit(parsing: "8/10s per ip", bucket: "match"))!]
        return configuration
    }

    /// ``Verdicts/evaluate(stream:context:)`` that yields now and then: these tests are CPU-bound
    /// and share the cooperative pool with the end-to-end suites, whose runs must not starve.
    static func evaluate(_ stream: [RunRecord], context: VerdictContext) async -> VerdictsReport {
        var passes = VerdictStream(context: context)
        for (index, record) in stream.enumerated() {
            passes.consume(record)
            if index % 256 == 0 { await Task.yield() }
        }
        return passes.finish()
    }

    static func context(horizon: Double, live: Bool) -> VerdictContext {
        VerdictContext(
            configuration: configuration, maxRetries: 2, runStartEpoch: epoch, ledgerStreamed: true, ledgerLive: live,
            horizonSeconds: horizon)
    }

    @Test("pruning past a 30 s horizon gives the same report as keeping everything, and as the ledger given up front")
    func streamingEqualsInMemory() async throws {
        let run = SyntheticRun(seconds: 120, perSecond: 10)
        let kept = await Self.evaluate(run.stream, context: Self.context(horizon: .infinity, live: false))
        let pruned = await Self.evaluate(run.stream, context: Self.context(horizon: 30, live: true))
        let upFront = Verdicts.evaluate(
            VerdictInputs(
                attempts: run.attempts, calls: run.calls, ledger: run.ledger, attribution: run.attribution,
                configuration: Self.configuration, maxRetries: 2, runStartEpoch: Self.epoch))
        #expect(pruned == kept)
        #expect(upFront == kept)
        // The run exercised what it claims to: every reconciliation outcome, 429s, retries.
        let events = try #require(kept.reconciliation.endpoints["events"])
        #expect(events.deliveredOnce > 0 && events.duplicated > 0 && events.lost > 0 && events.landedUnknown > 0)
        #expect(events.unexpected == 1)
        #expect(kept.reconciliation.ignoredLedgerEntries == 1)
        let session = try #require(kept.reconciliation.endpoints["session"])
        #expect(session.deliveredOnce > 0 && session.lost > 0)
        let match = try #require(kept.limits.buckets["match"])
        #expect(match.rejected > 0 && match.windows > 20)
        #expect(match.enforcedExactly, "\(match)")
        #expect(kept.backoff.exponential.checked > 0)
        #expect(kept.attribution.overall.devices > 0)
    }

    @Test("the passes that judge whole calls share the stream's one grouping and judge as each pass alone does")
    func callPassesShareOneGrouping() async throws {
        let run = SyntheticRun(seconds: 60, perSecond: 10)
        // 80 event calls that end on a timeout with no retry: missing retries, enough to settle early.
        var attempts = run.attempts
        var calls = run.calls
        for index in 0..<80 {
            let t = 0.5 + Double(index) * 0.5
            let callId = UInt64(1_000_000 + index)
            attempts.append(
                AttemptRecord(
                    device: "m\(index % 3)", launch: 1, callId: callId, endpoint: .events, attempt: 1, intendedStart: t,
                    actualStart: t, end: t + 0.01, status: nil, errorKind: .timedOut, retryAfterSeconds: nil,
                    requestBytes: 1,
                    responseBytes: 1, correlationId: nil))
            calls.append(
                CallRecord(
                    device: "m\(index % 3)", launch: 1, callId: callId, endpoint: .events, attempts: 1,
                    intendedStart: t,
                    start: t, end: t + 0.01, outcome: .connectionError, finalStatus: nil, correlationId: nil))
        }
        let context = VerdictContext(configuration: Self.configuration, maxRetries: 2, runStartEpoch: Self.epoch)
        let streamed = await Self.evaluate(
            Verdicts.timeOrdered(attempts: attempts, calls: calls, attribution: run.attribution), context: context)
        let backoffAlone = Verdicts.run(BackoffVerdict.self, attempts: attempts, calls: calls, context: context)
        let retriesAlone = Verdicts.run(RetryMatrixVerdict.self, attempts: attempts, calls: calls, context: context)
        #expect(streamed.backoff == backoffAlone)
        #expect(streamed.retries == retriesAlone)
        // Both passes judged every call, retries and missing retries included.
        #expect(streamed.retries.calls == calls.count)
        #expect((streamed.retries.violationsByKind["missing_retry"] ?? 0) >= 80)
        #expect(streamed.backoff.exponential.checked > 0)
        let notRetried = try #require(streamed.backoff.rateLimitedNotRetried)
        #expect(notRetried.callEnded + notRetried.runEnded > 0)
    }

    @Test("live order with a little reordering (rows of different threads) still gives the same report")
    func smallReorderingKeepsTheReport() async throws {
        let run = SyntheticRun(seconds: 120, perSecond: 10)
        var stream = run.stream
        // Swap neighbours every 7 records: the recorder's threads may hand rows of different calls
        // over slightly out of order (a call always follows its own attempts: one thread emits both).
        func key(_ record: RunRecord) -> CallKey? {
            switch record {
            case .attempt(let attempt): CallKey(attempt)
            case .call(let call): CallKey(call)
            case .attribution, .ledger: nil
            }
        }
        var swapped = 0
        for index in stride(from: 0, to: stream.count - 1, by: 7) where key(stream[index]) != key(stream[index + 1]) {
            stream.swapAt(index, index + 1)
            swapped += 1
        }
        #expect(swapped > 200)
        let kept = await Self.evaluate(run.stream, context: Self.context(horizon: .infinity, live: false))
        let pruned = await Self.evaluate(stream, context: Self.context(horizon: 30, live: true))
        #expect(pruned == kept)
    }

    @Test("a server clock 500 s ahead (a remote or virtual clock): rows still wait for their calls, same report")
    func skewedLedgerClock() async throws {
        let run = SyntheticRun(seconds: 120, perSecond: 10)
        // Rows come in the same order as live, but their arrival times read 500 s later.
        let skewed = run.stream.map { record -> RunRecord in
            guard case .ledger(var entry) = record else { return record }
            entry.arrivedAt += 500
            return .ledger(entry)
        }
        let kept = await Self.evaluate(skewed, context: Self.context(horizon: .infinity, live: false))
        let pruned = await Self.evaluate(skewed, context: Self.context(horizon: 30, live: true))
        // Events join on their correlation id whatever the clock: the same outcomes as unskewed,
        // and no row was given up as unexpected while its call was still to come.
        let unskewed = await Self.evaluate(run.stream, context: Self.context(horizon: 30, live: true))
        #expect(pruned.reconciliation.endpoints["events"] == unskewed.reconciliation.endpoints["events"])
        #expect(pruned.reconciliation.endpoints["events"] == kept.reconciliation.endpoints["events"])
        // Session rows join by device and time: every call is judged once, every row counted once
        // (which call of a device gets a row 500 s off its span is a nearest-span guess either way).
        let session = try #require(pruned.reconciliation.endpoints["session"])
        let keptSession = try #require(kept.reconciliation.endpoints["session"])
        #expect(session.calls == keptSession.calls)
        func rows(_ c: ReconciliationVerdict.EndpointCounts) -> Int {
            c.deliveredOnce + c.landedUnknown + c.duplicated + c.duplicateWrites + c.unexpected
        }
        #expect(rows(session) == rows(keptSession))
    }

    @Test("what the passes hold stays flat: 4× the run length, the same retained state (within 10 %)")
    func passStateIsBounded() async {
        /// The most each pass held, sampled every 500 records.
        func retained(seconds: Int) async -> (limits: Int, reconciliation: Int) {
            let context = Self.context(horizon: 30, live: true)
            var limits = LimitOracleVerdict.makePass(context)
            var reconciliation = ReconciliationVerdict.makePass(context)
            var most = (limits: 0, reconciliation: 0)
            for (index, record) in SyntheticRun(seconds: seconds, perSecond: 10).stream.enumerated() {
                limits.consume(record)
                reconciliation.consume(record)
                if index % 500 == 0 {
                    most = (max(most.limits, limits.retained), max(most.reconciliation, reconciliation.retained))
                    await Task.yield()
                }
            }
            return most
        }
        let short = await retained(seconds: 90)
        let long = await retained(seconds: 360)
        #expect(short.limits > 0 && short.reconciliation > 0)
        #expect(Double(long.limits) <= Double(short.limits) * 1.1 + 10, "\(short) vs \(long)")
        #expect(Double(long.reconciliation) <= Double(short.reconciliation) * 1.1 + 10, "\(short) vs \(long)")
        // Keeping everything (infinite horizon) grows with the run: the comparison can fail.
        var everything = ReconciliationVerdict.makePass(Self.context(horizon: .infinity, live: false))
        for record in SyntheticRun(seconds: 90, perSecond: 10).stream { everything.consume(record) }
        #expect(everything.retained > 2 * short.reconciliation)
    }

    @Test("a missing retry is settled as soon as the stream passes its due time, not held to the end")
    func missingRetriesSettleEarly() {
        var pass = RetryMatrixVerdict.makePass(VerdictContext())
        // 200 event calls that each end on a timeout after one attempt: a retry was due soon after.
        for index in 0..<200 {
            let t = Double(index)
            let attempt = AttemptRecord(
                device: "d1", launch: 1, callId: UInt64(index), endpoint: .events, attempt: 1, intendedStart: t,
                actualStart: t, end: t + 0.01, status: nil, errorKind: .timedOut, retryAfterSeconds: nil,
                requestBytes: 1,
                responseBytes: 1, correlationId: nil)
            pass.consume(.attempt(attempt))
            pass.consume(
                .call(
                    CallRecord(
                        device: "d1", launch: 1, callId: UInt64(index), endpoint: .events, attempts: 1,
                        intendedStart: t,
                        start: t, end: t + 0.01, outcome: .connectionError, finalStatus: nil, correlationId: nil)))
        }
        #expect(pass.missing.count < 70)
        let verdict = pass.finish()
        #expect(verdict.violationsByKind["missing_retry"] == 199)
        #expect(verdict.cutShort == 1)
    }

    @Test("the back-off excess sketch is exact while small and keeps count, min and max exact when thinned")
    func distributionSketch() {
        var small = DistributionSketch(capacity: 1_000)
        var large = DistributionSketch(capacity: 1_000)
        let values = (0..<10_000).map { Double(($0 * 7_919) % 10_000) / 100 - 20 }
        for value in values.prefix(500) { small.append(value) }
        for value in values { large.append(value) }
        #expect(small.distribution == Distribution(Array(values.prefix(500))))
        let exact = Distribution(values)
        let sketched = large.distribution
        #expect(large.values.count <= 1_000)
        #expect(sketched.count == exact.count && sketched.min == exact.min && sketched.max == exact.max)
        for (a, b) in [(sketched.p50, exact.p50), (sketched.p90, exact.p90), (sketched.p99, exact.p99)] {
            #expect(abs((a ?? 0) - (b ?? 0)) < 1.0, "\(sketched) vs \(exact)")
        }
    }
}
