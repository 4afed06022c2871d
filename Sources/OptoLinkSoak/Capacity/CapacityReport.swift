import Foundation
import SoakReports
import SoakVerdicts

/// What `optolink-soak capacity` found: `capacity.json` (every probe, and the answer), its
/// readable twin `capacity.txt` and `report.html` (the probes plotted), each written atomically
/// into the report directory.
package struct CapacityReport: Sendable, Equatable, Codable {
    /// The answer in figures: the highest rate that held the SLO, and the bracket it lies in.
    package struct Knee: Sendable, Equatable, Codable {
        /// The highest passing arrival rate, and the request rate measured there.
        package var journeysPerSecond: Double
        package var requestsPerSecond: Double
        /// [highest pass, lowest fail] in journeys/s; the top is `nil` when no probe failed.
        package var bracket: [Double?]
        /// The SLO term that failed at the bracket's top (the first to break as the rate rises).
        package var limitedBy: String?
    }

    /// The search's bounds as run.
    package struct Settings: Sendable, Equatable, Codable {
        package var minRate: Double
        package var maxRate: Double
        package var tolerance: Double
        package var maxProbes: Int
        package var probeSeconds: Double
        package var warmupSeconds: Double
        package var processes: Int
        /// The limits past which a probe counted the generator as saturated.
        package var generatorLimits: CapacityGeneratorHealth.Limits

        package init(
            minRate: Double, maxRate: Double, tolerance: Double, maxProbes: Int, probeSeconds: Double,
            warmupSeconds: Double, processes: Int, generatorLimits: CapacityGeneratorHealth.Limits = .init()
        ) {
            self.minRate = minRate
            self.maxRate = maxRate
            self.tolerance = tolerance
            self.maxProbes = maxProbes
            self.probeSeconds = probeSeconds
            self.warmupSeconds = warmupSeconds
            self.processes = processes
            self.generatorLimits = generatorLimits
        }
    }

    package var profile: String
    package var backend: String
    package var slo: [String]
    package var settings: Settings
    /// ``CapacitySearch/Ending``'s name, or `error` when a probe could not run.
    package var ending: String
    /// One sentence: the answer, or why there is none, and what to do.
    package var message: String
    package var exitCode: Int32
    package var knee: Knee?
    package var probes: [CapacityProbe]
    package var notes: [String]

    /// The report of a search that ended with `answer`.
    package static func make(
        answer: CapacitySearch.Answer, probes: [CapacityProbe], profile: String, backend: String, slo: [String],
        settings: Settings
    ) -> CapacityReport {
        var knee: Knee? = nil
        if let rate = answer.knee {
            let atKnee = probes.last { $0.rate == rate && $0.result == "pass" }
            knee = Knee(
                journeysPerSecond: rate, requestsPerSecond: atKnee?.requestsPerSecond ?? 0,
                bracket: [answer.low, answer.high], limitedBy: answer.limitedBy)
        }
        return CapacityReport(
            profile: profile, backend: backend, slo: slo, settings: settings, ending: answer.ending.rawValue,
            message: message(answer, knee: knee, settings: settings), exitCode: exitCode(answer.ending), knee: knee,
            probes: probes, notes: notes(probes))
    }

    /// 0: a knee within the tolerance, or the highest rate sustained · 1: the SLO failed at the
    /// minimum rate, or the backend did not recover · 2: inconclusive (the generator's limit, the
    /// probe budget) — a probe that could not run is 2 as well.
    package static func exitCode(_ ending: CapacitySearch.Ending) -> Int32 {
        switch ending {
        case .knee, .sustainedMax: return 0
        case .failedAtMinimum, .notRecovered: return 1
        case .generatorLimit, .budgetExhausted: return 2
        }
    }

    static func message(_ answer: CapacitySearch.Answer, knee: Knee?, settings: Settings) -> String {
        let low = answer.low.map(rate) ?? "?"
        let high = answer.high.map(rate) ?? "?"
        let requests = knee.map { " (≈ \(Self.rate($0.requestsPerSecond)) requests/s)" } ?? ""
        let term = answer.limitedBy.map { "; limited by \($0)" } ?? ""
        switch answer.ending {
        case .knee:
            return "knee: \(low) journeys/s\(requests), between \(low) and \(high) journeys/s "
                + "(within \(CapacityGeneratorHealth.percent(settings.tolerance)))\(term)"
        case .sustainedMax:
            return "the backend held the SLO at the highest rate asked for, \(low) journeys/s\(requests): "
                + "raise --max-rate to find the knee"
        case .failedAtMinimum:
            return "the SLO failed even at the minimum rate, \(rate(settings.minRate)) journeys/s\(term): "
                + "lower --min-rate, or look at the probe's report"
        case .notRecovered:
            return "the backend did not recover: after failing at \(high) journeys/s it failed again at "
                + "\(low) journeys/s, which had passed before\(term)"
        case .generatorLimit:
            let at = answer.generatorLimit.map(rate) ?? "?"
            let why = answer.generatorReason.map { " (\($0))" } ?? ""
            return "the generator, not the backend, reached its limit at \(at)/s\(why): add processes "
                + "(--processes) or shards; the backend held the SLO up to \(low) journeys/s"
        case .budgetExhausted:
            let between =
                answer.high == nil
                ? "is at least \(low) journeys/s" : "lies between \(low) and \(high) journeys/s"
            return "the probe budget (\(settings.maxProbes)) ran out: the knee \(between), not yet within "
                + "\(CapacityGeneratorHealth.percent(settings.tolerance)); raise --max-probes or --min-rate"
        }
    }

    static func notes(_ probes: [CapacityProbe]) -> [String] {
        var notes = [
            "429s from the declared rate limits are reported per probe (limits429: their share of attempts) "
                + "and are not capacity failures"
        ]
        if probes.contains(where: { $0.generator.cpuShare == nil }) {
            notes.append(
                "the embedded emulator shares this process and its cores with the generator: their CPU use is "
                    + "measured together (processCPUShare) and does not make a probe invalid, and a generator that "
                    + "lags may lag for the emulator's CPU use; to tell them apart run the backend in its own "
                    + "process (`optolink-soak serve`, then --base-url) or the generator in shards (--processes P)")
        }
        return notes
    }

    /// Rates as people read them: 3 significant digits, no trailing zeros.
    static func rate(_ value: Double) -> String {
        value >= 100 ? String(Int(value.rounded())) : String(format: "%.3g", value)
    }

    /// `capacity.txt`: the answer, then one line per probe.
    package var text: String {
        var lines = [
            "optolink-soak capacity — \(profile) against \(backend)",
            "SLO: " + slo.joined(separator: " AND "),
            "",
            message,
            "",
            "probe  purpose   journeys/s  requests/s  result   429s   late   CPU   SLO terms",
        ]
        for probe in probes {
            let terms = probe.slo.map { term in
                // Latencies in the unit the SLO is written in (ms or s), other metrics as numbers.
                let metric = term.expression.split(separator: " ").first ?? ""
                let isTime = metric.contains("latency") || metric.contains("duration")
                let value =
                    term.observed.map { isTime ? SoakComparison.formatSeconds($0) : String(format: "%.4g", $0) }
                    ?? "n/a"
                return "\(metric)=\(value)\(term.passed ? "" : " ✗")"
            }
            let late =
                probe.generator.started > 0
                ? CapacityGeneratorHealth.percent(Double(probe.generator.lateStarts) / Double(probe.generator.started))
                : "-"
            let cpu = CapacityGeneratorHealth.percent(probe.generator.cpuShare ?? probe.generator.processCPUShare)
            lines.append(
                [
                    pad("\(probe.index)", 5), pad(probe.purpose.rawValue, 8), pad(Self.rate(probe.rate), 11),
                    pad(Self.rate(probe.requestsPerSecond), 11), pad(probe.result, 7),
                    pad(CapacityGeneratorHealth.percent(probe.limits429), 5), pad(late, 5), pad(cpu, 5),
                    terms.joined(separator: ", "),
                ].joined(separator: "  "))
            if let why = probe.failed ?? probe.invalidReason { lines.append("       \(probe.result): \(why)") }
            if let note = probe.note { lines.append("       note: \(note)") }
        }
        lines.append("")
        lines += notes.map { "note: \($0)" }
        return lines.joined(separator: "\n") + "\n"
    }

    private func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }

    /// `report.html`: the answer, every probe plotted against each SLO term with the knee marked
    /// (``CapacityHTML``), and the probes as a table.
    package var html: String {
        let probes = probes.map { probe in
            CapacityHTML.Probe(
                index: probe.index, rate: probe.rate, requestsPerSecond: probe.requestsPerSecond, result: probe.result,
                why: probe.failed ?? probe.invalidReason,
                observed: Dictionary(
                    probe.slo.compactMap { term in term.observed.map { (term.expression, $0) } },
                    uniquingKeysWith: { first, _ in first }))
        }
        let meta =
            "against \(backend) · \(probes.count) of at most \(settings.maxProbes) probes of "
            + "\(Self.rate(settings.probeSeconds)) s · tolerance "
            + CapacityGeneratorHealth.percent(settings.tolerance)
        return CapacityHTML.page(
            title: "optolink-soak capacity · \(profile)", meta: meta, message: message, passed: exitCode == 0,
            slo: slo, probes: probes, knee: knee?.journeysPerSecond, notes: notes)
    }

    /// Writes `capacity.json`, `capacity.txt` and `report.html` into `directory`, each atomically.
    package func write(to directory: URL) throws {
        try AtomicFile.writeJSON(self, to: directory.appendingPathComponent("capacity.json"))
        try AtomicFile.write(Data(text.utf8), to: directory.appendingPathComponent("capacity.txt"))
        try AtomicFile.write(Data(html.utf8), to: directory.appendingPathComponent("report.html"))
    }
}
