import Foundation
import OptoLink
import Testing

import OptoLinkSoak
import SoakRecords
import SoakVerdicts
import SoakReports
import SoakTestSupport

/// A run that did not run its course is no evidence for `compare`; `summary.json` says in one
/// word how a run ended; the headline says why no retry after a 429 was judged.
@Suite("Partial runs and the run's result", .serialized, .timeLimit(.minutes(1)))
struct PartialRunReportTests {
    /// One way a run can fall short of its course, as a change to a whole run's summary, and
    /// the words `compare` must give for it.
    struct Cut: Sendable, CustomStringConvertible {
        var description: String
        var because: String
        var apply: @Sendable (inout SoakSummary) -> Void
    }

    static let cuts: [Cut] = [
        Cut(description: "SIGINT", because: "stopped by SIGINT after ") {
            $0.run.interrupted = true
            $0.run.stopReason = .interrupted
            $0.result = .interrupted
        },
        Cut(description: "SIGTERM, then the grace deadline", because: "stopped by SIGTERM after ") {
            $0.run.interrupted = true
            $0.run.stopReason = .deadline
            $0.result = .terminated
        },
        Cut(description: "misconfigured", because: "every response was refused (misconfigured)") {
            $0.run.stopReason = .misconfigured
            $0.result = .invalid
        },
        Cut(description: "abortOnFail", because: "an abortOnFail threshold failed") {
            $0.run.stopReason = .thresholdAborted
            $0.result = .failed
        },
        Cut(description: "missing shards", because: "shards 1/3, 2/3 are missing") {
            var shards = SoakSummary.Sharding(count: 3)
            shards.merged = [0]
            shards.missing = [1, 2]
            $0.run.shards = shards
        },
        Cut(description: "an incomplete report", because: "its result is invalid, see its notes") {
            $0.result = .invalid
            $0.notes.append("report I/O failed: attempts.csv: missing")
        },
    ]

    @Test("compare refuses each kind of partial run, current or baseline, with exit 2 unless --allow-partial")
    func compareRefusesPartialRuns() async throws {
        let e2e = try EndToEndRun(profile: e2eProfile(devices: 20, rate: 60, steps: #"{"kind": "firstLaunch"}"#))
        #expect(await e2e.makeRun().execute().exitCode == 0, "\(e2e.log)")
        let whole = e2e.reportDirectory
        let twin = e2e.directory.appendingPathComponent("twin")
        try FileManager.default.copyItem(at: whole, to: twin)
        #expect(
            CompareCommand.run(CompareOptions(baselinePath: whole.path, currentPath: twin.path)) { _ in }.exitCode == 0)
        // A run cut only at its grace deadline (no signal) ran its whole plan, as every run of a
        // profile whose calls sleep out long Retry-Afters at the end: compared as usual.
        let cutAtDeadline = e2e.directory.appendingPathComponent("deadline")
        try FileManager.default.copyItem(at: whole, to: cutAtDeadline)
        var deadlineSummary = try SoakReportDirectory.load(cutAtDeadline).summary
        deadlineSummary.run.stopReason = .deadline
        try AtomicFile.writeJSON(deadlineSummary, to: cutAtDeadline.appendingPathComponent("summary.json"))
        #expect(CompareCommand.partialReason(deadlineSummary) == nil)
        for (baseline, current) in [(whole, cutAtDeadline), (cutAtDeadline, whole)] {
            let options = CompareOptions(baselinePath: baseline.path, currentPath: current.path)
            #expect(CompareCommand.run(options) { _ in }.exitCode == 0)
        }
        for (index, cut) in Self.cuts.enumerated() {
            let partial = e2e.directory.appendingPathComponent("partial-\(index)")
            try FileManager.default.copyItem(at: whole, to: partial)
            var summary = try SoakReportDirectory.load(partial).summary
            cut.apply(&summary)
            try AtomicFile.writeJSON(summary, to: partial.appendingPathComponent("summary.json"))
            for (side, baseline, current) in [("current", whole, partial), ("baseline", partial, whole)] {
                var options = CompareOptions(baselinePath: baseline.path, currentPath: current.path)
                options.outDirectory = e2e.directory.appendingPathComponent("cmp-\(index)-\(side)").path
                let messages = MessageLog()
                let refused = CompareCommand.run(options, log: messages.append)
                #expect(refused.exitCode == 2, "\(cut), \(side): \(messages.lines)")
                #expect(
                    messages.lines.contains {
                        $0.hasPrefix("error: the \(side) run did not run its course (") && $0.contains(cut.because)
                            && $0.contains("--allow-partial")
                            && $0.contains(side == "current" ? "cannot show there is no regression" : "no reference")
                    }, "\(cut), \(side): \(messages.lines)")
                #expect(!FileManager.default.fileExists(atPath: options.outDirectory ?? ""), "\(cut): files written")
                options.allowPartial = true
                let allowed = CompareCommand.run(options) { _ in }
                #expect(allowed.exitCode == 0, "\(cut), \(side)")
                let notes = allowed.comparison?.notes ?? []
                #expect(
                    notes.contains {
                        $0.hasPrefix("the \(side) run did not run its course") && $0.hasSuffix("(--allow-partial)")
                    },
                    "\(cut), \(side): \(notes)")
            }
        }
    }

    @Test("compare --allow-partial is parsed; compare --help and run --help say what a partial run gets")
    func commandLine() throws {
        guard
            let options = try SoakCommandLine.parse(["compare", "--allow-partial", "a", "b"]).subcommand(
                CompareSubcommand.self)?.options
        else {
            Issue.record("not a compare command")
            return
        }
        #expect(options.allowPartial && options.baselinePath == "a" && options.currentPath == "b")
        guard let plain = try SoakCommandLine.parse(["compare", "a", "b"]).subcommand(CompareSubcommand.self)?.options
        else { return }
        #expect(!plain.allowPartial)
        #expect(CompareSubcommand.usage.contains("--allow-partial"))
        #expect(CompareSubcommand.usage.contains("a partial run without\n--allow-partial"))
    }

    @Test("the result decides the exit code: a reason it cannot be judged, then a signal, then a failed threshold")
    func resultAndExitCode() {
        let failed = [
            ThresholdResult(expression: "x < 1", metric: "x", observed: 2, limit: 1, passed: false, message: nil)
        ]
        let passed = [
            ThresholdResult(expression: "x < 3", metric: "x", observed: 2, limit: 3, passed: true, message: nil)
        ]
        #expect(RunResult.judge(invalidReason: nil, signal: nil, thresholds: passed) == .passed)
        #expect(RunResult.judge(invalidReason: nil, signal: nil, thresholds: []) == .passed)
        #expect(RunResult.judge(invalidReason: nil, signal: nil, thresholds: passed + failed) == .failed)
        #expect(RunResult.judge(invalidReason: nil, signal: .interrupted, thresholds: failed) == .interrupted)
        #expect(RunResult.judge(invalidReason: nil, signal: .terminated, thresholds: passed) == .terminated)
        #expect(RunResult.judge(invalidReason: "ledger", signal: .terminated, thresholds: failed) == .invalid)
        #expect(RunResult.allCases.map(\.exitCode) == [0, 1, 2, 1, 2, 130, 143])
    }

    @Test("a summary without result (an older version) still reads: no result line, compare and report.html work")
    func olderSummaryWithoutResult() async throws {
        let older = try WholeRuns.MainJobTests.emptySummary()
        #expect(older.result == nil)
        let text = SummaryText.render(older)
        #expect(text.hasPrefix("optolink-soak 0 · profile p"), "\(text.prefix(100))")
        #expect(!HTMLReport.run(older, attempts: nil).isEmpty)
        var newer = older
        newer.result = .failed
        let encoded = try JSONEncoder().encode(newer)
        #expect(String(decoding: encoded, as: UTF8.self).contains(#""result":"failed""#))
        #expect(try JSONDecoder().decode(SoakSummary.self, from: encoded).result == .failed)
        #expect(SummaryText.render(newer).hasPrefix("result: failed (exit 1), 0 of 0 thresholds failed"))

        // A real report with its result removed compares against one that has it.
        let e2e = try EndToEndRun(profile: e2eProfile(devices: 10, rate: 60, steps: #"{"kind": "firstLaunch"}"#))
        #expect(await e2e.makeRun().execute().exitCode == 0, "\(e2e.log)")
        let old = e2e.directory.appendingPathComponent("old")
        try FileManager.default.copyItem(at: e2e.reportDirectory, to: old)
        var json = try e2e.summaryJSON()
        #expect(json["result"] as? String == "passed")
        json["result"] = nil
        try JSONSerialization.data(withJSONObject: json).write(to: old.appendingPathComponent("summary.json"))
        #expect(try SoakReportDirectory.load(old).summary.result == nil)
        #expect(
            CompareCommand.run(CompareOptions(baselinePath: old.path, currentPath: e2e.reportDirectory.path)) { _ in }
                .exitCode == 0)
    }

    @Test(
        "the headline says why no retry after a 429 was judged: none at all, all cut by the run's end, or which fates",
        arguments: [
            (0, [], "NOT SHOWN, no 429 was answered, so there was no retry after one to judge"),
            (170, ["run"], "NOT SHOWN, 170 429s, none followed by a retry before the run ended"),
            (
                3, ["run", "budget", "withoutN"],
                "NOT SHOWN, 3 429s, none retried after the N it asked for: 1 cut by the run's end before their retry; "
                    + "1 ended their call (retry budget spent, or an endpoint never retried); 1 carried no N"
            ),
        ] as [(Int, [String], String)])
    func notShownSaysWhy(status429: Int, fates: [String], expected: String) throws {
        // Each 429 ends its call: cut by the run (cancelled_by_run), its budget spent (api_error),
        // or retried without an N (judged on the exponential table, not as a 429 with N).
        var attempts: [AttemptRecord] = []
        var calls: [CallRecord] = []
        for (index, fate) in fates.enumerated() {
            let id = UInt64(index + 1)
            switch fate {
            case "run":
                attempts += Fixture.call(.events, call: id, [.init(status: 429, retryAfter: 5)])
                calls.append(Fixture.callRecord(.events, call: id, outcome: .cancelledByRun))
            case "budget":
                attempts += Fixture.call(.events, call: id, [.init(status: 429, retryAfter: 1)])
                calls.append(Fixture.callRecord(.events, call: id, outcome: .apiError))
            default:
                attempts += Fixture.call(.events, call: id, [.init(status: 429, gapAfter: 0.5), .init(status: 200)])
                calls.append(Fixture.callRecord(.events, call: id, attempts: 2))
            }
        }
        var backoff = Verdicts.run(
            BackoffVerdict.self, attempts: attempts, calls: calls,
            context: VerdictContext(configuration: VerdictsConfiguration()))
        #expect(backoff.rateLimited.checked == 0)
        if status429 == 170 {
            // The user's run: 170 429s, every retry cut by the run's end (the records never closed).
            backoff = BackoffVerdict.evaluate(
                (1...170).flatMap { Fixture.call(.events, call: UInt64($0), [.init(status: 429, retryAfter: 30)]) },
                configuration: VerdictsConfiguration())
            #expect(backoff.rateLimitedNotRetried == .init(runEnded: 170))
        }
        var summary = try WholeRuns.MainJobTests.emptySummary()
        summary.totals.status429 = status429
        // A declared limit: the line is shown even when no 429 came.
        // An empty fixed-window verdict (no limits declared).
        var limits = LimitOracleVerdict.evaluate([], configuration: VerdictsConfiguration())
        limits.buckets["events"] = LimitOracleVerdict.Bucket(
            declared: DeclaredLimit(limit: 10, windowSeconds: 2, scope: .key), endpoints: [.events])
        summary.verdicts = VerdictsReport(
            results: [
                backoff, limits,
                RetryMatrixVerdict.evaluate(attempts: [], calls: [], maxRetries: 2, configuration: .init()),
            ])
        let line = try #require(SummaryText.headline(summary).first { $0.hasPrefix("clients waited as told:") })
        #expect(line.hasPrefix("clients waited as told: " + expected), "\(line)")
        #expect(!line.contains("no retry after a 429 was judged"))
    }

    @Test("a report from before the 429 fates were counted still says how many 429s there were")
    func olderBackoffWithoutFates() throws {
        var backoff = BackoffVerdict.evaluate([], configuration: VerdictsConfiguration())
        backoff.rateLimitedNotRetried = nil
        #expect(
            SummaryText.notJudged(status429: 4, backoff) == "4 429s, no retry after one with N was judged")
    }
}
