import Foundation
import OptoLink
import OptoLinkStaging
import Testing

@testable import OptoLinkSoak
import SoakRecords
import SoakVerdicts

/// The recorder's writer thread (``SoakRecorder/startWriter(backlogLimit:)``): attempts and calls
/// recorded through it end as the same rows, aggregates and verdicts as recorded inline, in the
/// same order; the backlog stays under its limit; nothing queued is lost at the end.
@Suite struct RecorderWriterTests {
    struct Outcome {
        var attemptsCSV: String
        var callsCSV: String
        var tally: RecorderTally
        var verdicts: Data
        var lag: SoakSummary.RecordingLag?
        var deviceIds: [DeviceLaunch: String]
    }

    /// Launches of 4 calls on 40 devices, every 7th call retried after a 429 (its `N` = 1 s), every
    /// 11th ending without a response; a ledger row and a `deviceId` per launch. Times are given.
    static func drive(
        _ recorder: SoakRecorder, launches: Range<Int>, devices: Int = 40, yieldEvery: Int = 25
    ) async {
        for launch in launches {
            if launch % yieldEvery == 0 { await Task.yield() }
            let deviceLaunch = DeviceLaunch(device: "d\(launch % devices)", launch: launch / devices + 1)
            let (label, device, number) = (deviceLaunch.label, deviceLaunch.device, deviceLaunch.launch)
            recorder.deviceIdRecorded(device: device, launch: number, deviceId: "id-\(launch)")
            for step in 0..<4 {
                let callId = UInt64(step + 1)
                let serial = launch * 4 + step
                let t = Double(launch) * 0.05 + Double(step) * 0.01
                let attempts = serial % 7 == 0 ? 2 : 1
                for attempt in 1...attempts {
                    let start = t + Double(attempt - 1) * 1.0
                    let context = OptoLinkRequestContext(
                        endpoint: step == 0 ? .session : .events, callId: callId, attempt: attempt,
                        instanceLabel: label, timeout: .seconds(10))
                    _ = recorder.beginAttempt(launch: deviceLaunch, context: context, actualStart: start)
                    let limited = attempt < attempts
                    let lost = !limited && serial % 11 == 0
                    recorder.endAttempt(
                        record: AttemptRecord(
                            device: device, launch: number, callId: callId,
                            endpoint: ContractEndpoint(context.endpoint),
                            attempt: attempt, intendedStart: start, actualStart: start, end: start + 0.004,
                            status: lost ? nil : (limited ? 429 : 200), errorKind: lost ? .timedOut : nil,
                            retryAfterSeconds: limited ? 1 : nil, requestBytes: 10, responseBytes: 10,
                            correlationId: "run:\(device):\(serial)"))
                }
                recorder.closeCalls(deviceLaunch, callIds: [callId], outcome: nil)
            }
            let lastSerial = launch * 4 + 3
            recorder.ledgerRecorded(
                LedgerRow(
                    sequence: launch + 1, arrivedAt: recorder.timeline.originEpoch + Double(launch) * 0.05 + 0.032,
                    endpoint: "events", deviceId: "id-\(launch)", apiKeySuffix: "abcdef", eventName: "e",
                    properties: ["opl_corr": "run:\(device):\(lastSerial)"]))
            recorder.closeCalls(deviceLaunch, callIds: nil, outcome: nil)
        }
    }

    static func record(
        writer: Bool, backlogLimit: Int = 2_000_000, concurrently: Int = 1, launches: Int = 600
    ) async throws -> Outcome {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("writer-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let recorder = try SoakRecorder(
            directory: directory, timeline: RunTimeline(),
            verdictContext: VerdictContext(ledgerStreamed: true, ledgerLive: true, horizonSeconds: 120),
            keepsMergeInputs: true)
        if writer { try recorder.startWriter(backlogLimit: backlogLimit) }
        if concurrently == 1 {
            await drive(recorder, launches: 0..<launches)
        } else {
            // Each task owns whole devices, so no two tasks touch the same call.
            let share = launches / concurrently
            await withTaskGroup(of: Void.self) { group in
                for part in 0..<concurrently {
                    group.addTask {
                        await drive(
                            recorder, launches: (part * share)..<((part + 1) * share), devices: 1_000_000,
                            yieldEvery: 5 + part)
                    }
                }
            }
        }
        recorder.finish()
        let verdicts = recorder.finishVerdicts()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return Outcome(
            attemptsCSV: try String(contentsOf: directory.appendingPathComponent("attempts.csv"), encoding: .utf8),
            callsCSV: try String(contentsOf: directory.appendingPathComponent("calls.csv"), encoding: .utf8),
            tally: recorder.tally(), verdicts: try encoder.encode(verdicts), lag: recorder.recordingLag,
            deviceIds: recorder.launchDeviceIds)
    }

    @Test("through the writer: the same CSV bytes, aggregates and verdicts as recorded inline")
    func writerMatchesInline() async throws {
        let inline = try await Self.record(writer: false)
        let written = try await Self.record(writer: true)
        #expect(inline.attemptsCSV.split(separator: "\n").count == 1 + 2_400 + 343)
        #expect(written.attemptsCSV == inline.attemptsCSV)
        #expect(written.callsCSV == inline.callsCSV)
        #expect(written.verdicts == inline.verdicts)
        #expect(written.tally.attempts == inline.tally.attempts)
        #expect(written.tally.calls == 2_400 && inline.tally.calls == 2_400)
        #expect(written.tally.status429 == 343)
        #expect(written.tally.errors == inline.tally.errors && inline.tally.errors > 0)
        #expect(written.tally.intervals == inline.tally.intervals)
        #expect(written.tally.endpoints["events"]?.byStatus == inline.tally.endpoints["events"]?.byStatus)
        #expect(written.deviceIds == inline.deviceIds && inline.deviceIds.count == 600)
        #expect(inline.lag == nil)
        let lag = try #require(written.lag)
        #expect(lag.backlogPeak >= 1 && lag.drainSeconds >= 0)
    }

    @Test("past the backlog limit a recording thread applies events itself: the queue never holds more than limit + 2")
    func backlogStaysBounded() async throws {
        for limit in [1, 8, 100] {
            let inline = try await Self.record(writer: false, launches: 200)
            let written = try await Self.record(writer: true, backlogLimit: limit, launches: 200)
            let lag = try #require(written.lag)
            #expect(lag.backlogPeak <= limit + 2, "limit \(limit)")
            #expect(written.callsCSV == inline.callsCSV, "limit \(limit)")
            #expect(written.verdicts == inline.verdicts, "limit \(limit)")
        }
    }

    @Test("four recording tasks at once through the writer: every row, every call closed, 0 lost")
    func concurrentRecordersLoseNothing() async throws {
        let written = try await Self.record(writer: true, concurrently: 4, launches: 800)
        // Four tasks, 200 launches each, on devices of their own: 4 calls per launch.
        let calls = 3_200
        #expect(written.tally.calls == calls)
        #expect(written.callsCSV.split(separator: "\n").count == 1 + calls)
        let outcomes = written.tally.endpoints.values.reduce(into: [String: Int]()) { all, e in
            for (outcome, n) in e.callOutcomes { all[outcome, default: 0] += n }
        }
        #expect(outcomes["unfinished", default: 0] == 0)
        let total = outcomes.values.reduce(0, +)
        #expect(total == calls)
    }

    @Test("live readers see what the writer applied; finish applies the rest")
    func liveReadersCatchUp() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("writer-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let recorder = try SoakRecorder(directory: directory, timeline: RunTimeline())
        try recorder.startWriter()
        await Self.drive(recorder, launches: 0..<50)
        // The writer applies on its own: wait (bounded by count, not by a time budget) until it has.
        var polls = 0
        while recorder.progressCounters(at: 0).requests < 200 + 29 && polls < 200_000 {
            polls += 1
            try await Task.sleep(for: .milliseconds(1))
        }
        #expect(recorder.progressCounters(at: 0).requests == 200 + 29)
        #expect(recorder.statusCounts()[.events]?["429"] != nil)
        recorder.finish()
        #expect(recorder.callsCSV.rowCount == 200)
        #expect(recorder.recordingLag != nil)
    }
}
