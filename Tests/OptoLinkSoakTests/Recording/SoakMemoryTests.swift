import Foundation
import OptoLink
import OptoLinkStaging
import Testing

@testable import OptoLinkSoak
import SoakRecords
import SoakVerdicts

/// Memory of a long run in virtual time (issue 12): what the recorder keeps after 30 s and after
/// 120 s of the same traffic is the same; the RSS growth metric and the timeline's RSS column.
/// The real-time RSS comparison of two runs is `Benchmarks/soak-memory.sh`.
@Suite struct SoakMemoryTests {
    /// Drives a recorder with `seconds` of 25 calls/s (launches of 5 calls on 500 devices,
    /// some retried after a 503), times given explicitly; returns what it still holds.
    static func drive(seconds: Int) async throws -> (openCalls: Int, launches: Int, labels: Int, calls: Int) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("memory-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let recorder = try SoakRecorder(
            directory: directory, timeline: RunTimeline(),
            verdictContext: VerdictContext(ledgerStreamed: true, ledgerLive: true, horizonSeconds: 120))
        var callId: UInt64 = 0
        for launch in 0..<(seconds * 5) {
            if launch % 50 == 0 { await Task.yield() }
            let deviceLaunch = DeviceLaunch(device: "d\(launch % 500)", launch: launch / 500 + 1)
            let (label, device, number) = (deviceLaunch.label, deviceLaunch.device, deviceLaunch.launch)
            recorder.deviceIdRecorded(device: device, launch: number, deviceId: "id-\(launch)")
            for step in 0..<5 {
                callId += 1
                let t = Double(launch) / 5 + Double(step) * 0.01
                let attempts = callId % 17 == 0 ? 2 : 1
                for attempt in 1...attempts {
                    let start = t + Double(attempt - 1) * 0.5
                    let context = OptoLinkRequestContext(
                        endpoint: .events, callId: callId, attempt: attempt, instanceLabel: label,
                        timeout: .seconds(10))
                    _ = recorder.beginAttempt(launch: deviceLaunch, context: context, actualStart: start)
                    recorder.endAttempt(
                        record: AttemptRecord(
                            device: device, launch: number, callId: callId, endpoint: .events, attempt: attempt,
                            intendedStart: start, actualStart: start, end: start + 0.005,
                            status: attempt < attempts ? 503 : 200, errorKind: nil, retryAfterSeconds: nil,
                            requestBytes: 10, responseBytes: 10, correlationId: "run:\(device):\(callId)"))
                }
                recorder.closeCalls(deviceLaunch, callIds: [callId], outcome: nil)
            }
            recorder.closeCalls(deviceLaunch, callIds: nil, outcome: nil)
        }
        let held = recorder.state.withLock { s in
            (
                s.calls.openCalls.count, s.calls.launchDeviceIds.count,
                s.calls.openPerLaunch.count + s.calls.endedLaunches.count, s.consumers.aggregate.calls
            )
        }
        recorder.finish()
        _ = recorder.finishVerdicts()
        return held
    }

    @Test("30 s and 120 s of the same traffic: the recorder holds the same (nothing per launch or per call)")
    func recorderStateIsFlat() async throws {
        let short = try await Self.drive(seconds: 30)
        let long = try await Self.drive(seconds: 120)
        #expect(short.calls == 30 * 25 && long.calls == 120 * 25)
        #expect(short.openCalls == 0 && long.openCalls == 0)
        #expect(short.labels == 0 && long.labels == 0)
        // Only the latest install's deviceId per virtual device may stay (bounded by the population).
        #expect(long.launches == short.launches && long.launches == 0)
    }

    @Test("open model: finished journeys' tasks are taken as the run goes, not kept up to maxInFlight (virtual time)")
    func finishedJourneysDoNotPileUp() async throws {
        // 20 journeys/s for 30 s on 50 devices, maxInFlight 1000: 600 short journeys, never 1000 in flight.
        let run = try VirtualDriverRun(
            profile: deadlineProfile(
                devices: 50, steps: #"{"kind": "firstLaunch"}, {"kind": "event", "name": "e"}"#,
                load: #"{"model": "open", "startRate": 20, "stages": [{"duration": 30, "target": 20}], "#
                    + #""maxInFlight": 1000, "duration": 30, "grace": 5}"#
            )
        ) { _, context in VirtualBackend.ok(context) }
        _ = await run.run()
        #expect(run.summary.completed > 550, "\(run.summary.completed) journeys completed")
        // Each finished journey's task (with its stack slabs) is released within a few arrivals.
        let peak = run.driver.finishedNotTakenPeak.withLock { $0 }
        #expect(peak >= 0 && peak < 20, "\(peak) finished journeys waited to be taken")
    }

    @Test("a shard keeps every launch's deviceId and attribution record for its manifest")
    func shardKeepsMergeInputs() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("memory-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let recorder = try SoakRecorder(directory: directory, timeline: RunTimeline(), keepsMergeInputs: true)
        for launch in 1...3 {
            recorder.deviceIdRecorded(device: "d1", launch: launch, deviceId: "id-\(launch)")
            recorder.closeCalls(DeviceLaunch(device: "d1", launch: launch), callIds: nil, outcome: nil)
        }
        recorder.deferredMatchRecorded(
            AttributionRecord(device: "d1", clickedLinkId: nil, emittedLinkId: nil, matchMethod: nil, sharedNAT: false))
        #expect(recorder.launchDeviceIds.count == 3)
        #expect(recorder.attribution.count == 1)
        recorder.finish()
    }

    @Test("rss.growth_mb_per_hour is the slope over the second half: a warm-up jump does not count")
    func growthSlope() {
        // First half: 50 → 150 MiB (warm-up); second half: +10 MiB per hour.
        var samples: [SoakSummary.RSSSample] = []
        for minute in 0...120 {
            let t = Double(minute) * 60
            let mib = minute < 60 ? 50 + Double(minute) * 100 / 60 : 150 + (t - 3600) / 3600 * 10
            samples.append(.init(t: t, bytes: Int(mib * 1_048_576)))
        }
        let growth = RSSGrowth.growthMiBPerHour(samples) ?? .nan
        #expect(abs(growth - 10) < 0.01, "\(growth)")
        let flat = (0...20).map { SoakSummary.RSSSample(t: Double($0) * 10, bytes: 80_000_000 + ($0 % 2) * 4096) }
        #expect(abs(RSSGrowth.growthMiBPerHour(flat) ?? .nan) < 1)
        #expect(RSSGrowth.growthMiBPerHour(Array(flat.prefix(4))) == nil)
        #expect(RSSGrowth.growthMiBPerHour([]) == nil)
    }

    @Test("the growth metric is in the catalogue, usable in a threshold, and 'not exercised' without samples")
    func growthMetricInThresholds() throws {
        #expect(Thresholds.isKnownMetric("rss.growth_mb_per_hour"))
        #expect(Thresholds.problem(in: "rss.growth_mb_per_hour < 20") == nil)
        #expect(Thresholds.problem(in: "rss.growth_mb_per_hour < 20ms") != nil)
        let failed = Thresholds.evaluate(
            [ThresholdSpec("rss.growth_mb_per_hour < 20")], metrics: ["rss.growth_mb_per_hour": 31], notExercised: [:])
        #expect(failed.first?.passed == false)
        let unmeasured = Thresholds.evaluate(
            [ThresholdSpec("rss.growth_mb_per_hour < 20")], metrics: [:],
            notExercised: ["rss.growth_mb_per_hour": "fewer than 3 RSS samples in the second half of the run"])
        #expect(unmeasured.first?.passed == false)
        #expect(unmeasured.first?.notExercised?.contains("fewer than 3 RSS samples") == true)
    }

    @Test("each timeline interval gets the RSS of its last sample")
    func timelineRSS() {
        var timeline = (0..<4).map {
            SoakSummary.Interval(
                t: Double($0) * 5, journeys: 0, lateStarts: 0, attempts: 0, status429: 0, errors: 0,
                meanLatencyFromIntended: 0, maxLatencyFromIntended: 0)
        }
        let samples = [(0.0, 10), (3.0, 11), (6.0, 12), (19.0, 14), (25.0, 99)].map {
            SoakSummary.RSSSample(t: $0.0, bytes: $0.1)
        }
        SoakRun.placeRSS(samples, in: &timeline, interval: 5)
        #expect(timeline.map(\.rssBytes) == [11, 12, nil, 14])
    }
}
