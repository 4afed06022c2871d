import Foundation
import OptoLinkSoak
import Testing

@Suite("capacity probes: verdicts, report and command line")
struct CapacityProbeTests {
    static let latency = "events.call_latency.p99 < 250ms"
    static let errors = "http.failed.rate < 0.01"

    static func terms(failing: Set<String> = []) -> [CapacityProbe.Term] {
        [errors, latency].map { CapacityProbe.Term(expression: $0, observed: 0.1, passed: !failing.contains($0)) }
    }

    static func health(
        started: Int = 1000, late: Int = 0, dropped: Int = 0, lag: Double = 0.002, cpu: Double? = 0.3
    ) -> CapacityGeneratorHealth {
        CapacityGeneratorHealth(
            scheduled: started + dropped, started: started, lateStarts: late, dropped: dropped, startLagP99: lag,
            cpuShare: cpu, processCPUShare: cpu ?? 0.5)
    }

    @Test("every term held and the generator kept up: pass")
    func pass() {
        let verdict = CapacityProbe.verdict(terms: Self.terms(), health: Self.health())
        #expect(verdict.result == "pass")
        #expect(verdict.failed == nil && verdict.invalidReason == nil)
    }

    @Test("a broken term: fail, naming the first term that broke")
    func fail() {
        let verdict = CapacityProbe.verdict(terms: Self.terms(failing: [Self.latency]), health: Self.health())
        #expect(verdict.result == "fail")
        #expect(verdict.failed == Self.latency)
    }

    @Test("the generator's CPU over the limit: invalid, even when the SLO broke")
    func cpuInvalid() {
        let verdict = CapacityProbe.verdict(terms: Self.terms(failing: [Self.errors]), health: Self.health(cpu: 0.97))
        #expect(verdict.result == "invalid")
        #expect(verdict.invalidReason?.contains("97 %") == true)
    }

    @Test("late starts, dropped arrivals or start lag while the SLO held: invalid")
    func lagInvalid() {
        for health in [Self.health(late: 100), Self.health(dropped: 30), Self.health(lag: 0.4)] {
            #expect(CapacityProbe.verdict(terms: Self.terms(), health: health).result == "invalid")
        }
    }

    @Test("one dropped arrival in a thousand (the window's last, missing its end) does not make a probe invalid")
    func oneDropIsNotSaturation() {
        #expect(CapacityProbe.verdict(terms: Self.terms(), health: Self.health(dropped: 1)).result == "pass")
    }

    @Test("late starts behind a failing backend are back-pressure: fail, with a note")
    func lagBehindFailingBackend() {
        let verdict = CapacityProbe.verdict(terms: Self.terms(failing: [Self.latency]), health: Self.health(late: 300))
        #expect(verdict.result == "fail")
        #expect(verdict.note?.contains("30 %") == true)
    }

    @Test("no CPU figure for the generator (embedded emulator in-process): CPU never makes it invalid")
    func noCPUFigure() {
        #expect(CapacityProbe.verdict(terms: Self.terms(), health: Self.health(cpu: nil)).result == "pass")
    }

    static func probe(_ index: Int, _ rate: Double, _ result: String) -> CapacityProbe {
        CapacityProbe(
            index: index, rate: rate, purpose: .bracket, seconds: 5, warmupSeconds: 1, result: result,
            failed: result == "fail" ? latency : nil, invalidReason: nil, slo: terms(), requestsPerSecond: rate * 3,
            journeysPerSecond: rate, limits429: 0.02, generator: health(), report: "probes/\(index)", note: nil)
    }

    static let settings = CapacityReport.Settings(
        minRate: 50, maxRate: 1000, tolerance: 0.05, maxProbes: 8, probeSeconds: 5, warmupSeconds: 1, processes: 1)

    @Test("a knee: exit 0, the bracket and the limiting term in capacity.json, written and read back")
    func kneeReport() throws {
        let answer = CapacitySearch.Answer(
            ending: .knee, knee: 97.5, low: 97.5, high: 101.25, limitedBy: Self.latency, probes: 2)
        let report = CapacityReport.make(
            answer: answer, probes: [Self.probe(1, 97.5, "pass"), Self.probe(2, 101.25, "fail")], profile: "p",
            backend: "http://127.0.0.1:1", slo: [Self.latency], settings: Self.settings)
        #expect(report.exitCode == 0)
        #expect(report.knee?.requestsPerSecond == 292.5)
        #expect(report.message.hasPrefix("knee: 97.5 journeys/s"))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("capacity-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        try report.write(to: directory)
        let data = try Data(contentsOf: directory.appendingPathComponent("capacity.json"))
        let read = try JSONDecoder().decode(CapacityReport.self, from: data)
        #expect(read == report)
        let text = try String(contentsOf: directory.appendingPathComponent("capacity.txt"), encoding: .utf8)
        #expect(text.contains("limited by \(Self.latency)"))
        #expect(text.contains("not capacity failures"))
    }

    @Test(
        "exit codes: 0 knee or maximum held · 1 failed at the minimum or no recovery · 2 inconclusive",
        arguments: [
            (CapacitySearch.Ending.knee, Int32(0)), (.sustainedMax, 0), (.failedAtMinimum, 1), (.notRecovered, 1),
            (.generatorLimit, 2), (.budgetExhausted, 2),
        ])
    func exitCodes(ending: CapacitySearch.Ending, code: Int32) {
        #expect(CapacityReport.exitCode(ending) == code)
    }

    @Test("the generator's limit is named with the fix, not reported as a knee")
    func generatorLimitMessage() {
        var answer = CapacitySearch.Answer(
            ending: .generatorLimit, knee: 200, low: 200, high: nil, limitedBy: nil, probes: 4)
        answer.generatorLimit = 400
        answer.generatorReason = "the generator used 97 % of its CPU (limit 90 %)"
        let report = CapacityReport.make(
            answer: answer, probes: [], profile: "p", backend: "b", slo: [Self.errors], settings: Self.settings)
        #expect(report.message.hasPrefix("the generator, not the backend, reached its limit at 400/s"))
        #expect(report.message.contains("--processes"))
        #expect(report.exitCode == 2)
    }

    @Test("the command line: capacity flags, run flags passed on to every probe, errors naming the flag")
    func commandLine() throws {
        let command = try SoakCommandLine.parse([
            "capacity", "p.json", "--slo", Self.errors, "--slo", Self.latency, "--min-rate", "20", "--tolerance", "2%",
            "--max-probes", "6", "--probe-seconds", "5", "--processes", "2", "--base-url", "http://127.0.0.1:9",
            "--insecure",
        ])
        guard let options = command.subcommand(CapacitySubcommand.self)?.options else {
            Issue.record("not a capacity command: \(command)")
            return
        }
        #expect(options.slo == [Self.errors, Self.latency])
        #expect(options.minRate == 20 && options.tolerance == 0.02 && options.maxProbes == 6)
        #expect(options.probeSeconds == 5)
        #expect(options.run.processes == 2)
        #expect(options.run.baseURL?.absoluteString == "http://127.0.0.1:9")
        #expect(options.run.tls.verifiesPeer == false)
        #expect(throws: SoakUsageError.self) { try SoakCommandLine.parse(["capacity", "p.json", "--slo", "nope"]) }
        let error = #expect(throws: SoakUsageError.self) {
            try SoakCommandLine.parse(["capacity", "p.json", "--min-rate", "20", "--max-rate", "10"])
        }
        #expect(error?.message == "--max-rate 10.0 is below --min-rate 20.0")
        guard case .help(let text) = try SoakCommandLine.parse(["capacity", "--help"]) else {
            Issue.record("capacity --help is not help")
            return
        }
        #expect(text.contains("Exit codes: 0 a knee"))
    }

    @Test("generator limits: flags over the profile's capacity.generatorLimits over the defaults, each field alone")
    func generatorLimitsLayers() throws {
        let command = try CapacitySubcommand(arguments: [
            "p.json", "--max-late-starts", "20%", "--max-start-lag", "250ms",
        ])
        #expect(command.options.generatorLimits.lateShare == 0.2)
        #expect(command.options.generatorLimits.startLagP99 == 0.25)
        #expect(command.options.generatorLimits.droppedShare == nil && command.options.generatorLimits.cpuShare == nil)
        let profile = try JSONDecoder().decode(
            CapacityGeneratorLimits.self, from: Data(#"{"lateShare": 0.1, "droppedShare": 0.03}"#.utf8))
        let limits = command.options.generatorLimits.applied(to: profile.applied(to: CapacityGeneratorHealth.Limits()))
        #expect(limits.lateShare == 0.2, "the flag wins over the profile")
        #expect(limits.droppedShare == 0.03, "the profile wins over the default")
        #expect(limits.startLagP99 == 0.25)
        #expect(limits.cpuShare == 0.9, "the default stays")
        // 10 % late starts: invalid under the default 5 %, a pass under the lifted 20 %.
        let late = Self.health(late: 100)
        #expect(CapacityProbe.verdict(terms: Self.terms(), health: late).result == "invalid")
        #expect(CapacityProbe.verdict(terms: Self.terms(), health: late, limits: limits).result == "pass")
        let error = #expect(throws: SoakUsageError.self) {
            try CapacitySubcommand(arguments: ["p.json", "--max-generator-cpu", "150%"])
        }
        #expect(error?.message.hasPrefix("--max-generator-cpu: \"150%\" must be 0.01…1") == true)
    }
}
