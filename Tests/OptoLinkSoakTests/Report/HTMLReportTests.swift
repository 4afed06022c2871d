import Foundation
import OptoLink
import Testing

@testable import OptoLinkSoak
import SoakRecords
import SoakVerdicts
@testable import SoakReports
import SoakSupport

@Suite("report.html", .serialized, .timeLimit(.minutes(2)))
struct HTMLReportTests {
    /// Every `data-key`/`data-value` number of a page: (run, key, value).
    static func numbers(_ html: String) -> [(run: String, key: String, value: Double)] {
        let pattern = #/data-run="([^"]*)" data-key="([^"]*)" data-value="([^"]*)"/#
        return html.matches(of: pattern).compactMap { m in
            Double(m.output.3).map { (String(m.output.1), String(m.output.2), $0) }
        }
    }

    /// The value at a dotted `summary.json` path (`endpoints.match.attemptLatency.p95`, `thresholds.0.observed`).
    static func lookup(_ json: Any, _ path: String) -> Double? {
        var value: Any? = json
        for part in path.split(separator: ".") {
            if let array = value as? [Any], let index = Int(part), index < array.count {
                value = array[index]
            } else {
                value = (value as? [String: Any])?[String(part)]
            }
        }
        return (value as? NSNumber)?.doubleValue
    }

    /// No network: no `src`, no `<link>`, no URL other than the SVG namespace; a CSP that forbids any.
    static func expectSelfContained(_ html: String) {
        #expect(html.contains("default-src 'none'"))
        #expect(!html.contains(" src="))
        #expect(!html.contains("<link"))
        #expect(!html.contains("@import") && !html.contains("url("))
        let urls = html.matches(of: #/https?:\/\/[^"'\s<]*/#).map { String($0.output) }
            .filter { $0 != "http://www.w3.org/2000/svg" && !$0.hasPrefix("http://127.0.0.1") }
        #expect(urls.isEmpty, "\(urls)")
    }

    @Test("a run writes report.html: self-contained, every marked number equals summary.json")
    func runReport() async throws {
        let e2e = try EndToEndRun(
            profile: e2eProfile(
                devices: 20, rate: 40, steps: #"{"kind": "firstLaunch"}, {"kind": "event", "name": "e", "repeat": 2}"#,
                thresholds: #"["http.requests > 0", "match.call_latency.p95 < 10s"]"#))
        #expect(await e2e.makeRun().execute().exitCode == 0, "\(e2e.log)")
        let html = try String(contentsOf: e2e.reportDirectory.appendingPathComponent("report.html"), encoding: .utf8)
        Self.expectSelfContained(html)
        let summary = try e2e.summaryJSON()
        let numbers = Self.numbers(html)
        #expect(numbers.count >= 20)
        for (run, key, value) in numbers {
            #expect(run == "run")
            let expected = try #require(Self.lookup(summary, key), "\(key) not in summary.json")
            #expect(abs(expected - value) <= 1e-9 * max(1, abs(expected)), "\(key)")
        }
        #expect(html.contains("result: passed (exit 0), every threshold passed (2 judged)"))
        #expect(html.components(separatedBy: "<svg class=\"chart\"").count - 1 >= 6)
        // The headline is the run's result, not its thresholds alone: an interrupted run is no pass.
        var stopped = try SoakReportDirectory.load(e2e.reportDirectory).summary
        stopped.result = .interrupted
        let page = HTMLReport.run(stopped, attempts: nil)
        #expect(page.contains("<p class=\"outcome fail\" data-key=\"outcome\">result: interrupted (exit 130)"))
        #expect(!page.contains("every threshold passed"))
        // The first screen lists what failed before any chart.
        stopped.thresholds[0].passed = false
        stopped.thresholds[0].message = "observed 0"
        let failedPage = HTMLReport.run(stopped, attempts: nil)
        let failedList = try #require(failedPage.range(of: "<ul class=\"failed\" data-key=\"failed\">"))
        let firstChart = try #require(failedPage.range(of: "<svg class=\"chart\""))
        #expect(failedList.lowerBound < firstChart.lowerBound)
        #expect(failedPage.contains("<li><code>http.requests &gt; 0</code>: observed 0</li>"))
        stopped.thresholds[0].passed = true
        stopped.result = nil  // a summary written before `result`: judged by its thresholds
        #expect(
            HTMLReport.run(stopped, attempts: nil).contains(
                "<p class=\"outcome pass\" data-key=\"outcome\">every threshold passed"))
    }

    @Test("a one-hour run's page stays under 2 MB: bounded series, thinned back-off points, early ones kept")
    func hourLongRunIsSmall() async throws {
        let e2e = try EndToEndRun(
            profile: e2eProfile(devices: 10, rate: 40, steps: #"{"kind": "firstLaunch"}"#)
                .replacingOccurrences(
                    of: #""expect": {"thresholds": []}"#,
                    with:
                        #""expect": {"thresholds": [], "limits": {"events": "100/60s per key", "match": "30/60s per ip"}}"#
                ))
        #expect(await e2e.makeRun().execute().exitCode == 0, "\(e2e.log)")
        var summary = try SoakReportDirectory.load(e2e.reportDirectory).summary
        // An hour: 600 timeline rows of 6 s, 2,000 RSS samples, 126,000 attempts (35/s) with 429s and retries.
        summary.intervalSeconds = 6
        summary.timeline = (0..<600).map {
            .init(
                t: Double($0) * 6, journeys: 60, lateStarts: $0 % 7, attempts: 600, status429: 30, errors: 1,
                meanLatencyFromIntended: 0.01, maxLatencyFromIntended: 0.2)
        }
        summary.rss = (0..<2000).map { .init(t: Double($0) * 1.8, bytes: 50_000_000 + $0 * 1000) }
        var attempts: [AttemptRecord] = []
        attempts.reserveCapacity(126_000)
        let endpoints = ContractEndpoint.allCases
        var rng = SeededRandom(seed: 4)
        for i in 0..<120_000 {
            let start = Double(i) * 0.03
            let endpoint = endpoints[i % endpoints.count]
            let rateLimited = i % 20 == 0
            let device = "d\(i % 5000)"
            let end = start + 0.002 + rng.unit() * 0.02
            attempts.append(
                AttemptRecord(
                    device: device, launch: 1, callId: UInt64(i), endpoint: endpoint, attempt: 1, intendedStart: start,
                    actualStart: start, end: end, status: rateLimited ? 429 : 200,
                    errorKind: nil, retryAfterSeconds: rateLimited ? 1 + i % 5 : nil, requestBytes: 100,
                    responseBytes: 100, correlationId: nil, clientIP: "10.0.\(i % 7).\(i % 200)"))
            if rateLimited {
                let early = i % 1000 == 0
                let wait = Double(1 + i % 5) + (early ? -0.3 : rng.unit() * 0.1)
                attempts.append(
                    AttemptRecord(
                        device: device, launch: 1, callId: UInt64(i), endpoint: endpoint, attempt: 2,
                        intendedStart: end + wait, actualStart: end + wait, end: end + wait + 0.01,
                        status: 200, errorKind: nil, retryAfterSeconds: nil, requestBytes: 100, responseBytes: 100,
                        correlationId: nil, clientIP: "10.0.\(i % 7).\(i % 200)"))
            }
        }
        let html = HTMLReport.run(summary, attempts: attempts)
        let size = html.utf8.count
        #expect(size < 2_000_000, "report.html is \(size) bytes")
        Self.expectSelfContained(html)
        let series = ReportSeries(label: "run", summary: summary, attempts: attempts)
        // 6,000 retried 429s with N, a third of them on /sdk/session, which the contract never
        // retries (the retry audit's business, not back-off's): 4,000 judged, 80 of them early.
        let backoff = series.backoff
        #expect(backoff.judged == 4_000 && backoff.afterRetryAfter == 4_000)
        #expect(backoff.early.count == 80)
        #expect(backoff.early.count + backoff.onTime.count + backoff.late.count <= ReportSeries.maxPoints)
        #expect(backoff.early.count + backoff.onTime.count + backoff.late.count + backoff.thinned == 4_000)
        #expect(
            series.latency.count == endpoints.count && series.latency.allSatisfy { (600...601).contains($0.p95.count) })
        #expect(series.limits.map(\.bucket) == ["events", "match"])
        #expect(series.limits.allSatisfy { $0.within.count + $0.over.count <= ReportSeries.maxPoints })
        #expect(series.limits.first { $0.bucket == "events" }?.over.isEmpty == false, "a window over 100 is shown")
    }
}
