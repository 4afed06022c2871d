import Foundation
import SoakVerdicts

/// The `report.html` of `optolink-soak capacity`: the answer, then one chart per SLO term with
/// every probe plotted (arrival rate against the term's measured value; pass, fail and invalid
/// probes as separate series, the SLO's limit as a reference line, the knee as a vertical
/// line), then the probes as a table. Built with the run report's ``SVGChart`` and page.
package enum CapacityHTML {
    /// One probe as the page shows it.
    package struct Probe: Sendable, Equatable {
        package var index: Int
        /// Arrival rate held (journeys/s) and requests/s measured.
        package var rate: Double
        package var requestsPerSecond: Double
        /// `pass`, `fail` or `invalid`.
        package var result: String
        /// The failing term or why the probe is invalid.
        package var why: String?
        /// Each SLO term's measured value (`nil`: not measured), by expression.
        package var observed: [String: Double]

        package init(
            index: Int, rate: Double, requestsPerSecond: Double, result: String, why: String?,
            observed: [String: Double]
        ) {
            self.index = index
            self.rate = rate
            self.requestsPerSecond = requestsPerSecond
            self.result = result
            self.why = why
            self.observed = observed
        }
    }

    /// The colours of the three results, and of the knee.
    static let colors = ["pass": "#16a34a", "fail": "#dc2626", "invalid": "#94a3b8"]
    static let kneeColor = "#0f172a"

    /// The page: `title`, the one-sentence `message` (styled as passed when `passed`), a chart per
    /// term of `slo`, the probes and `notes`.
    package static func page(
        title: String, meta: String, message: String, passed: Bool, slo: [String], probes: [Probe], knee: Double?,
        notes: [String]
    ) -> String {
        let e = HTMLReport.e
        var body = "<header><h1>\(e(title))</h1><p class=\"meta\">\(e(meta))</p>"
        body += "<p class=\"outcome \(passed ? "pass" : "fail")\" data-key=\"outcome\">\(e(message))</p></header>"
        body += "<section><h2>Capacity: probes against each SLO term</h2>"
        body += "<p class=\"note\">Each point is one probe: green passed, red failed, grey invalid (the generator "
        body += "saturated). The dashed line is the SLO's limit"
        body += knee == nil ? ".</p>" : ", the dark vertical line the knee.</p>"
        body += slo.map { chart(term: $0, probes: probes, knee: knee).render() }.joined()
        body += "</section><section><h2>Probes</h2>\(table(probes, slo: slo))</section>"
        if !notes.isEmpty {
            body += "<section><h2>Notes</h2><ul>" + notes.map { "<li>\(e($0))</li>" }.joined() + "</ul></section>"
        }
        return HTMLReport.page(title: title, body: body)
    }

    /// The chart of one SLO term: the knee, a points series per result that has probes, the limit.
    static func chart(term: String, probes: [Probe], knee: Double?) -> SVGChart {
        var series: [SVGChart.Series] = []
        for result in ["pass", "fail", "invalid"] {
            let points = probes.filter { $0.result == result }.compactMap { probe in
                probe.observed[term].map { (x: probe.rate, y: $0) }
            }
            guard !points.isEmpty else { continue }
            series.append(.init(name: result, color: colors[result] ?? "#475569", style: .points, points: points))
        }
        let limit = Thresholds.evaluate(term, metrics: [:]).limit
        if let knee {
            // First, so the probes' points are drawn over the line.
            let values = probes.compactMap { $0.observed[term] } + [limit ?? 0]
            series.insert(
                .init(
                    name: "knee \(SVGChart.plain(knee)) journeys/s", color: kneeColor,
                    points: [(knee, 0), (knee, values.max() ?? 1)]), at: 0)
        }
        var chart = SVGChart(
            title: term, xLabel: "arrival rate (journeys/s)", yLabel: metricName(term), series: series)
        chart.xMargin = 0.05
        chart.yFormat = { Thresholds.display($0, like: term) }
        if let limit { chart.references = [(limit, "SLO: \(term)")] }
        return chart
    }

    /// The metric a term names (`events.call_latency.p99 < 250ms` → `events.call_latency.p99`).
    static func metricName(_ term: String) -> String {
        Thresholds.evaluate(term, metrics: [:]).metric ?? term
    }

    /// One row per probe, with its rate and result as data attributes.
    static func table(_ probes: [Probe], slo: [String]) -> String {
        let e = HTMLReport.e
        var out = "<table><tr><th>probe</th><th>journeys/s</th><th>requests/s</th><th>result</th>"
        out += slo.map { "<th>\(e(metricName($0)))</th>" }.joined() + "<th>why</th></tr>"
        for probe in probes {
            out += "<tr class=\"\(probe.result == "pass" ? "" : probe.result == "fail" ? "fail" : "skip")\" "
            out += "data-probe=\"\(probe.index)\" data-rate=\"\(probe.rate)\" data-result=\"\(e(probe.result))\">"
            out += "<td>\(probe.index)</td><td>\(e(SVGChart.plain(probe.rate)))</td>"
            out += "<td>\(e(SVGChart.plain(probe.requestsPerSecond)))</td><td>\(e(probe.result))</td>"
            for term in slo {
                out += "<td>\(e(probe.observed[term].map { Thresholds.display($0, like: term) } ?? "n/a"))</td>"
            }
            out += "<td>\(e(probe.why ?? ""))</td></tr>"
        }
        return out + "</table>"
    }
}
