import Foundation
import Testing

@testable import OptoLinkSoak
@testable import SoakRecords
@testable import SoakReports
@testable import SoakVerdicts

@Suite("report.html charts: one time axis, gaps, back-off deviations, no empty chart", .timeLimit(.minutes(2)))
struct ReportChartsTests {
    /// `(axis, x-min, x-max)` of every chart of a page.
    static func axes(_ html: String) -> [(axis: String, low: Double, high: Double)] {
        html.matches(of: #/<svg class="chart" [^>]*data-axis="([a-z]+)" data-x-min="([^"]+)" data-x-max="([^"]+)"/#)
            .compactMap { m in
                Double(m.output.2).flatMap { low in Double(m.output.3).map { (String(m.output.1), low, $0) } }
            }
    }

    static func attempt(
        call: UInt64, _ endpoint: ContractEndpoint = .match, attempt: Int, start: Double, end: Double, status: Int?,
        n: Int? = nil
    ) -> AttemptRecord {
        AttemptRecord(
            device: "d1", launch: 1, callId: call, endpoint: endpoint, attempt: attempt, intendedStart: start,
            actualStart: start, end: end, status: status, errorKind: nil, retryAfterSeconds: n, requestBytes: 10,
            responseBytes: 10, correlationId: nil, clientIP: "10.0.0.1")
    }

    /// A run of `seconds` with one timeline row a second, RSS samples and 4 journeys, none late.
    static func summary(seconds: Int) -> SoakSummary {
        let parts = RecorderTally(interval: 1, lateThreshold: 0.01).summaryParts(
            activeSeconds: Double(seconds), outage: nil)
        var journeys = parts.journeys
        journeys.started = 4
        journeys.completed = 4
        return SoakSummary(
            run: .init(
                runId: "r", profile: "p", soakVersion: "t", startedAt: "2026-12-04T00:00:00Z", startEpoch: 0,
                durationSeconds: Double(seconds), interrupted: false, stopReason: .duration, backend: "embedded",
                baseURL: "http://127.0.0.1:1", loadModel: "open", devices: 1, seed: 1),
            journeys: journeys, endpoints: parts.endpoints, totals: parts.totals, deferredMatch: parts.deferred,
            clicks: parts.clicks, opens: parts.opens,
            rss: (0..<seconds).map { .init(t: Double($0), bytes: 50_000_000) },
            timeline: (0..<seconds).map {
                .init(
                    t: Double($0), journeys: 1, lateStarts: 0, attempts: 2, status429: 0, errors: 0,
                    meanLatencyFromIntended: 0.01, maxLatencyFromIntended: 0.01)
            },
            metrics: [:], thresholds: [])
    }

    @Test("every time chart spans 0 … the run's length, and in a comparison 0 … the longer run")
    func oneTimeAxis() {
        // Responses in seconds 0–2 and 6–9 of a 12 s run.
        let attempts = [0, 1, 2, 6, 7, 8, 9].map { t in
            Self.attempt(call: UInt64(t), attempt: 1, start: Double(t) + 0.1, end: Double(t) + 0.12, status: 200)
        }
        let run = ReportSeries(label: "run", summary: Self.summary(seconds: 12), attempts: attempts)
        let page = HTMLReport.charts([run])
        let time = Self.axes(page).filter { $0.axis == "time" }
        // Load, /match latency, memory.
        #expect(time.count == 3)
        #expect(time.allSatisfy { $0.low == 0 && $0.high == 12 }, "\(time)")

        var longer = Self.summary(seconds: 30)
        longer.run.runId = "r2"
        let both = HTMLReport.charts([
            ReportSeries(label: "baseline", summary: Self.summary(seconds: 12), attempts: attempts),
            ReportSeries(label: "current", summary: longer, attempts: attempts),
        ])
        let shared = Self.axes(both).filter { $0.axis == "time" }
        #expect(shared.count == 3 && shared.allSatisfy { $0.low == 0 && $0.high == 30 }, "\(shared)")
    }

    @Test("seconds without a response are a gap in the latency line, not a line across them")
    func gapsAreGaps() throws {
        let chart = SVGChart(
            title: "t", xLabel: "x", yLabel: "y",
            series: [.init(name: "p50", color: "#000", points: [(0, 1), (1, 2), (2, 1), (6, 3), (7, 2)], gapOver: 1.5)]
        ).render()
        let path = try #require(chart.firstMatch(of: #/<path d="([^"]*)"/#)).output.1
        #expect(path.filter { $0 == "M" }.count == 2 && path.filter { $0 == "L" }.count == 3, "\(path)")
        let joined = SVGChart(
            title: "t", xLabel: "x", yLabel: "y",
            series: [.init(name: "p50", color: "#000", points: [(0, 1), (1, 2), (2, 1), (6, 3), (7, 2)])]
        ).render()
        #expect(try #require(joined.firstMatch(of: #/<path d="([^"]*)"/#)).output.1.filter { $0 == "M" }.count == 1)

        // In a report: /match answered in seconds 0–2 and 6–9 only: two segments per quantile.
        let attempts = [0, 1, 2, 6, 7, 8, 9].map { t in
            Self.attempt(call: UInt64(t), attempt: 1, start: Double(t) + 0.1, end: Double(t) + 0.12, status: 200)
        }
        let page = HTMLReport.charts([
            ReportSeries(label: "run", summary: Self.summary(seconds: 12), attempts: attempts)
        ])
        let latency = try #require(page.range(of: "/match: p50, p95, p99 per interval"))
        let svg = page[latency.lowerBound...].prefix { $0 != "/" || true }
        let end = try #require(svg.range(of: "</svg>"))
        let lines = svg[..<end.lowerBound].matches(of: #/<g class="series" data-series="\d+"><path d="([^"]*)"/#)
        #expect(lines.count == 3)
        #expect(lines.allSatisfy { $0.output.1.filter { $0 == "M" }.count == 2 }, "\(lines.map(\.output.1))")
    }

    @Test("the back-off chart places each judged retry at its deviation in ms, early and late marked")
    func backoffDeviations() throws {
        let attempts = [
            // On time: asked 2 s, waited 2.05 s.
            Self.attempt(call: 1, attempt: 1, start: 0.9, end: 1.0, status: 429, n: 2),
            Self.attempt(call: 1, attempt: 2, start: 3.05, end: 3.1, status: 200),
            // Early: asked 1 s, waited 0.7 s.
            Self.attempt(call: 2, attempt: 1, start: 1.9, end: 2.0, status: 429, n: 1),
            Self.attempt(call: 2, attempt: 2, start: 2.7, end: 2.8, status: 200),
            // Late: asked 1 s, waited 1.4 s (over the 0.25 s tolerance).
            Self.attempt(call: 3, attempt: 1, start: 4.9, end: 5.0, status: 429, n: 1),
            Self.attempt(call: 3, attempt: 2, start: 6.4, end: 6.5, status: 200),
            // Not retried.
            Self.attempt(call: 4, attempt: 1, start: 7.9, end: 8.0, status: 429, n: 1),
            // The session check-in is never retried by contract: its retry is not a back-off.
            Self.attempt(call: 5, .session, attempt: 1, start: 8.9, end: 9.0, status: 429, n: 1),
            Self.attempt(call: 5, .session, attempt: 2, start: 9.1, end: 9.2, status: 200),
        ]
        let backoff = ReportSeries.backoff(attempts, tolerances: BackoffTolerances())
        #expect(backoff.judged == 3 && backoff.afterRetryAfter == 3 && backoff.notRetried == 1)
        #expect(backoff.early.count == 1 && abs(backoff.early[0].x - -300) < 1e-6)
        #expect(abs(backoff.early[0].y - 1) <= 0.2, "a row per asked wait, spread ±0.2 s")
        #expect(backoff.onTime.count == 1 && abs(backoff.onTime[0].x - 50) < 1e-6)
        #expect(backoff.late.count == 1 && abs(backoff.late[0].x - 400) < 1e-6)
        // The verdict judges the same retries the same way.
        let verdict = BackoffVerdict.evaluate(attempts, configuration: VerdictsConfiguration())
        #expect(verdict.rateLimited.early == 1 && verdict.rateLimited.onTime == 1 && verdict.rateLimited.late == 1)

        let page = HTMLReport.charts([
            ReportSeries(label: "run", summary: Self.summary(seconds: 12), attempts: attempts)
        ])
        #expect(page.contains("3 retries judged (3 after a 429 with Retry-After N): 1 early (red), 1 on time, 1 late"))
        let axis = try #require(Self.axes(page).first { $0.axis == "value" && $0.low < 0 })
        #expect(abs(axis.low - -300) < 1e-6 && axis.high >= 400)
        #expect(page.contains(">early</text>") && page.contains(">late</text>"))
    }

    @Test("a chart with nothing to draw is left out with one line saying why; none is drawn empty")
    func omittedCharts() {
        var bare = Self.summary(seconds: 12)
        bare.rss = []
        bare.journeys.started = 0
        let page = HTMLReport.charts([ReportSeries(label: "run", summary: bare, attempts: nil)])
        #expect(page.contains("Latency over time: left out, attempts.csv not available."))
        #expect(page.contains("Resident memory of the soak process: left out, no RSS sample was recorded."))
        #expect(page.contains("Late starts per second: left out, no journey started late."))
        #expect(page.contains("left out, no journey started."))
        #expect(
            page.contains(
                "wait taken − wait asked (ms); left of the red line is early: left out, "
                    + "attempts.csv not available."))
        #expect(!page.contains("no data") && !page.contains("class=\"empty\""))
        #expect(Self.axes(page).count == 1, "only the load chart has something to draw")
    }
}
