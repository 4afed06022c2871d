import Foundation
import OptoLinkSoak
import Testing

/// `report.html` of `capacity`: one chart per SLO term with every measured probe as a point of
/// its result's series, and the knee as a vertical line at the knee's rate.
@Suite("capacity report.html")
struct CapacityHTMLTests {
    static let errors = "http.failed.rate < 0.01"
    static let latency = "events.call_latency.p99 < 250ms"

    /// A probe at `rate` with the given result, its latency p99 `latency` s and failed share `failed`.
    static func probe(_ index: Int, _ rate: Double, _ result: String, latency: Double?, failed: Double)
        -> CapacityProbe
    {
        let terms = [
            CapacityProbe.Term(expression: errors, observed: failed, passed: failed < 0.01),
            CapacityProbe.Term(expression: Self.latency, observed: latency, passed: (latency ?? 1) < 0.25),
        ]
        let health = CapacityGeneratorHealth(
            scheduled: 100, started: 100, lateStarts: result == "invalid" ? 40 : 0, dropped: 0, startLagP99: 0.002,
            cpuShare: 0.3, processCPUShare: 0.3)
        return CapacityProbe(
            index: index, rate: rate, purpose: .bracket, seconds: 5, warmupSeconds: 1, result: result,
            failed: result == "fail" ? Self.latency : nil, invalidReason: result == "invalid" ? "40 % late" : nil,
            slo: terms, requestsPerSecond: rate * 2, journeysPerSecond: rate, limits429: 0, generator: health,
            report: "probes/\(index)", note: nil)
    }

    /// Five probes: three passes (one without a latency figure), one fail, one invalid; knee 150.
    static func report() -> CapacityReport {
        let probes = [
            probe(1, 100, "pass", latency: 0.020, failed: 0), probe(2, 200, "fail", latency: 0.900, failed: 0.002),
            probe(3, 100, "pass", latency: nil, failed: 0), probe(4, 150, "pass", latency: 0.060, failed: 0),
            probe(5, 175, "invalid", latency: 0.100, failed: 0),
        ]
        var answer = CapacitySearch.Answer(
            ending: .generatorLimit, knee: 150, low: 150, high: 200, limitedBy: latency, probes: 5)
        answer.generatorLimit = 175
        return CapacityReport.make(
            answer: answer, probes: probes, profile: "cap<&>", backend: "http://127.0.0.1:1", slo: [errors, latency],
            settings: .init(
                minRate: 100, maxRate: 1000, tolerance: 0.05, maxProbes: 8, probeSeconds: 5, warmupSeconds: 1,
                processes: 1))
    }

    /// The `<svg>` elements of `html`, in order.
    static func charts(_ html: String) -> [String] {
        html.components(separatedBy: "<svg ").dropFirst().map { $0.components(separatedBy: "</svg>").first ?? "" }
    }

    /// `pattern`'s capture groups in every match within `text`.
    static func matches(_ pattern: String, in text: String) throws -> [[String]] {
        let regex = try NSRegularExpression(pattern: pattern)
        let range = NSRange(text.startIndex..., in: text)
        return regex.matches(in: text, range: range).map { match in
            (1..<match.numberOfRanges).map { Range(match.range(at: $0), in: text).map { String(text[$0]) } ?? "" }
        }
    }

    /// A chart's series by legend name: the `d` of its path.
    static func series(_ chart: String) throws -> [String: String] {
        let names = try matches(#"<g class="lg" data-series="(\d+)">.*?<text [^>]*>([^<]*)</text></g>"#, in: chart)
        let paths = try matches(#"<g class="series" data-series="(\d+)"><path d="([^"]*)""#, in: chart)
        var byIndex: [String: String] = [:]
        for path in paths { byIndex[path[0]] = path[1] }
        var out: [String: String] = [:]
        for name in names { out[name[1]] = byIndex[name[0]] }
        return out
    }

    /// The centres' x coordinates of a points path (`M{x-2} {y-2}h4v4h-4z` per point).
    static func pointXs(_ path: String) throws -> [Double] {
        try matches(#"M(-?[\d.]+) -?[\d.]+h4v4h-4z"#, in: path).compactMap { Double($0[0]).map { $0 + 2 } }
    }

    @Test("one chart per SLO term; every measured probe is a point of its result's series; the knee is a vertical line")
    func chartsPlotEveryProbe() throws {
        let html = Self.report().html
        let charts = Self.charts(html)
        #expect(charts.count == 2)
        let title = "<title>events.call_latency.p99 &lt; 250ms</title>"
        let latencyChart = try #require(charts.first { $0.contains(title) })
        let latency = try Self.series(latencyChart)
        // Probe 3 has no latency figure: two passes plotted, not three.
        #expect(try Self.pointXs(try #require(latency["pass"])).count == 2)
        #expect(try Self.pointXs(try #require(latency["fail"])).count == 1)
        #expect(try Self.pointXs(try #require(latency["invalid"])).count == 1)
        let errorChart = try #require(charts.first { $0 != latencyChart })
        #expect(try Self.pointXs(try #require(try Self.series(errorChart)["pass"])).count == 3)

        // The knee's line stands at the x of the passing probe at 150 journeys/s.
        let knee = try #require(latency["knee 150 journeys/s"])
        let ends = try Self.matches(#"^M(-?[\d.]+) (-?[\d.]+)L(-?[\d.]+) (-?[\d.]+)$"#, in: knee)
        let line = try #require(ends.first)
        #expect(line[0] == line[2], "the knee's line is vertical: \(knee)")
        let passXs = try Self.pointXs(try #require(latency["pass"])).sorted()
        #expect(passXs.count == 2)
        let kneeX = try #require(Double(line[0]))
        #expect(abs(kneeX - (passXs.last ?? 0)) < 0.2, "the knee at 150/s is the highest pass: \(kneeX) vs \(passXs)")
        #expect((passXs.first ?? 0) < kneeX)
        // The SLO's limit is the reference line.
        #expect(latencyChart.contains("class=\"ref\""))
        #expect(latencyChart.contains("SLO: events.call_latency.p99 &lt; 250ms"))
    }

    @Test("the probes table carries each probe's rate and result; the page escapes names and says the answer")
    func tableAndPage() throws {
        let report = Self.report()
        let html = report.html
        let rows = try Self.matches(#"data-probe="(\d+)" data-rate="([\d.]+)" data-result="(\w+)""#, in: html)
        #expect(rows.map { $0[2] } == ["pass", "fail", "pass", "pass", "invalid"])
        #expect(rows.map { Double($0[1]) } == [100, 200, 100, 150, 175])
        #expect(html.contains("cap&lt;&amp;&gt;") && !html.contains("cap<&>"))
        #expect(html.contains(report.message.replacingOccurrences(of: "<", with: "&lt;")))
        #expect(html.contains("class=\"outcome fail\""), "a generator-bound search is not a pass (exit 2)")
    }

    @Test("report.html is written beside capacity.json and capacity.txt, and no knee means no knee line")
    func writtenBesideTheJSON() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("capacity-html-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        var report = Self.report()
        try report.write(to: directory)
        let written = try String(contentsOf: directory.appendingPathComponent("report.html"), encoding: .utf8)
        #expect(written == report.html)
        #expect(try Self.series(try #require(Self.charts(written).first)).keys.contains { $0.hasPrefix("knee") })
        report.knee = nil
        for chart in Self.charts(report.html) {
            #expect(try Self.series(chart).keys.allSatisfy { !$0.hasPrefix("knee") })
        }
    }
}
