import Foundation
import Testing

import OptoLinkSoak
import SoakVerdicts

@Suite("Profile decoding")
struct ProfileDecodingTests {
    static let valid = """
        {"name": "t", "devices": {"count": 3},
         "journeys": [{"name": "j", "steps": [{"kind": "click", "link": "welcome"}, {"kind": "firstLaunch"},
                                              {"kind": "event", "name": "e", "repeat": 2}]}],
         "load": {"model": "open", "stages": [{"duration": 1, "target": 5}]}}
        """

    /// Decodes `json`, returning the error message (or nil when it decodes).
    static func message(_ json: String) -> String? {
        do {
            _ = try SoakProfile.decode(Data(json.utf8))
            return nil
        } catch {
            return (error as? SoakProfileError)?.message ?? "\(error)"
        }
    }

    static func replacing(_ old: String, with new: String) -> String {
        valid.replacingOccurrences(of: old, with: new)
    }

    @Test("a valid profile decodes with defaults")
    func valid() throws {
        let profile = try SoakProfile.decode(Data(Self.valid.utf8))
        #expect(profile.devices.count == 3)
        #expect(profile.seed == 1)
        #expect(profile.sdk.apiKey == "opl_sdk_test_acme_client")
        #expect(profile.journeys[0].steps[2] == .event(name: "e", properties: [:], repeat: 2))
        #expect(profile.load.effectiveDuration == 1)
    }

    @Test(
        "errors name the field path and the problem",
        arguments: [
            (
                #""kind": "click""#, #""kind": "clik""#,
                #"journeys[0].steps[0].kind: unknown step "clik" (expected one of click, firstLaunch, relaunch, open, event, identify, clearIdentity, wait)"#
            ),
            (#""count": 3"#, #""count": 0"#, "devices.count: must be 1…1000000"),
            (#""count": 3"#, #""count": "3""#, "devices.count: wrong type (expected a number)"),
            (
                #""model": "open""#, #""model": "opne""#,
                #"load.model: unknown load model "opne" (expected one of open, closed)"#
            ),
            (
                #""repeat": 2"#, #""repeat": 2, "times": 3"#,
                #"journeys[0].steps[2].times: unknown field for a "event" step (expected one of kind, name, properties, repeat)"#
            ),
            (
                #""name": "t","#, #""name": "t", "capacity": {"slo": ["http.nope < 1"], "maxProbes": 0},"#,
                "capacity.maxProbes: must be 1…100"
            ),
            (
                #""name": "t","#, #""name": "t", "capacity": {"generatorLimits": {"lateShare": 5}},"#,
                "capacity.generatorLimits.lateShare: must be 0…1 (a share of journeys started: 0.05 or 5% is 5 %)"
            ),
            (
                #""name": "t","#, #""name": "t", "capacity": {"generatorLimits": {"lateStarts": 0.1}},"#,
                "capacity.generatorLimits.lateStarts: unknown field (expected one of lateShare, droppedShare, "
                    + "startLagP99, cpuShare)"
            ),
            (
                #""name": "t","#, #""name": "t", "sedd": 3,"#,
                "sedd: unknown field (expected one of name, description, seed, devices, journeys, load, sdk, backend, "
                    + "expect, capacity)"
            ),
            (
                #"{"kind": "click", "link": "welcome"}, {"kind": "firstLaunch"},"#, "",
                #"journeys[0].steps[0]: a "event" step needs a firstLaunch or relaunch step before it"#
            ),
            (
                #""stages": [{"duration": 1, "target": 5}]"#, #""stages": [{"duration": 1, "rate": 5}]"#,
                "load.stages[0].rate: unknown field (expected one of duration, target)"
            ),
            (#", "link": "welcome""#, "", "journeys[0].steps[0].link: missing required field"),
            (#""count": 3"#, #""count": 20.5"#, "devices.count: 20.5 is not a whole number"),
            (#""name": "t","#, #""name": "t", "seed": -1,"#, "seed: -1 must not be negative"),
            (
                #""name": "t","#, #""name": "t", "sdk": {"maxRetries": 2.5},"#,
                "sdk.maxRetries: 2.5 is not a whole number"
            ),
            (#""repeat": 2"#, #""repeat": 1e30"#, "journeys[0].steps[2].repeat: 1e30 is out of range"),
            (
                #""name": "t","#,
                #""name": "t", "expect": {"thresholds": ["backoff.early == 0", "match.call_latency.p95 <"]},"#,
                "expect.thresholds[1]: bad value '': a number, optionally with ms, s or %"
            ),
            (
                #""name": "t","#, #""name": "t", "expect": {"thresholds": ["match.call_latncy.p95 < 250ms"]},"#,
                #"expect.thresholds[0]: unknown metric "match.call_latncy.p95" (did you mean match.call_latency.p95?)"#
            ),
            (
                #""name": "t","#,
                #""name": "t", "expect": {"limits": {"events": "40/2s per key"}, "thresholds": ["limits.evnts.exact == 1"]},"#,
                #"expect.thresholds[0]: unknown bucket "evnts" in limits.evnts.exact (did you mean limits.events.exact?): expect.limits declares events"#
            ),
            (
                #""name": "t","#, #""name": "t", "expect": {"thresholds": ["journey.k.duration.p95 < 2s"]},"#,
                #"expect.thresholds[0]: unknown journey "k" in journey.k.duration.p95 (did you mean journey.j.duration.p95?): the profile's journeys are j"#
            ),
            (
                #""name": "t","#, #""name": "t", "expect": {"thresholds": ["journey.jj.unfinished == 0"]},"#,
                #"expect.thresholds[0]: unknown journey "jj" in journey.jj.unfinished (did you mean journey.j.unfinished?): the profile's journeys are j"#
            ),
            (
                #""name": "t","#, #""name": "t", "expect": {"thresholds": ["opens.lost == 0"]},"#,
                #"expect.thresholds[0]: opens.lost measures open steps, and no journey of this profile has one (add {"kind": "open", …} to a journey's steps, or remove the threshold)"#
            ),
            (
                #""name": "t","#, #""name": "t", "expect": {"thresholds": ["backof.early == 0"]},"#,
                #"expect.thresholds[0]: unknown metric "backof.early" (did you mean backoff.early?)"#
            ),
            (
                #""name": "t","#, #""name": "t", "expect": {"thresholds": ["http.errors 5"]},"#,
                "expect.thresholds[0]: no operator: expected '<metric> <op> <value>' with op one of < <= > >= == !=, e.g. 'backoff.early == 0'"
            ),
        ])
    func errors(old: String, new: String, expected: String) {
        // The problem is reported with its path, whatever else is found in the same pass.
        let message = Self.message(Self.replacing(old, with: new)) ?? ""
        #expect(message == expected || message.split(separator: "\n").contains { $0 == "  \(expected)" }, "\(message)")
    }

    @Test("thresholds naming a declared journey, and opens.* with an open step, are accepted")
    func declaredJourneyAndOpens() {
        let thresholds =
            #""expect": {"thresholds": ["journey.j.duration.p95 < 2s", "journey.j.unfinished == 0", "#
            + #""opens.lost == 0"]}"#
        let withOpen = Self.replacing(#""name": "t","#, with: #""name": "t", \#(thresholds),"#)
            .replacingOccurrences(
                of: #"{"kind": "event", "name": "e", "repeat": 2}"#,
                with: #"{"kind": "event", "name": "e", "repeat": 2}, {"kind": "open", "link": "welcome"}"#)
        #expect(Self.message(withOpen) == nil)
    }

    @Test("not JSON at all is reported as such")
    func notJSON() throws {
        let message = try #require(Self.message("{\"name\": "))
        #expect(message.hasPrefix("not valid JSON"))
    }

    @Test("a syntax error names its line and column")
    func syntaxErrorPosition() throws {
        let json = "{\n  \"name\": \"t\",,\n  \"seed\": 1\n}"
        let message = try #require(Self.message(json))
        #expect(message.hasPrefix("not valid JSON: line 2, column 15"), "\(message)")
    }

    @Test("thresholds over declared buckets and every documented family are accepted")
    func knownMetrics() {
        for metric in [
            "match.call_latency.p95", "http.errors.rate", "limits.session_identity.exact", "limits.match.too_strict",
            "events.lost", "reconcile.duplicated", "retry.violations.retried_4xx",
            "attribution.method.CLIPBOARD.correct",
            "backoff.429.early", "backoff.gap_excess.p99", "deferred.FINGERPRINT_EXACT",
            "identity_clear.calls.unfinished",
            "journeys.start_lag.p999", "rss.max_bytes", "verdicts.ignored_attempts", "retry.events.violations",
        ] {
            #expect(Thresholds.isKnownMetric(metric), "\(metric)")
        }
        let missing = Thresholds.evaluate(["events.lost == 0", "match.attempts > 0"], metrics: [:])
        #expect(missing[0].message?.contains("needs the server ledger") == true)
        #expect(missing[1].message == "metric 'match.attempts' not available in this run")
        for metric in ["match.latency.p95", "events.lst", "limits.match", "http.429.p95", "foo"] {
            #expect(!Thresholds.isKnownMetric(metric), "\(metric)")
        }
    }

    @Test("a closed model without duration or iterations is refused (a run must stop)")
    func closedUnbounded() {
        let json = Self.replacing(
            #""model": "open", "stages": [{"duration": 1, "target": 5}]"#, with: #""model": "closed""#)
        #expect(Self.message(json) == "load.duration: the closed model needs duration or iterations (a run must stop)")
    }

    @Test("every shipped profile decodes and its backend section is a valid emulator configuration")
    func shippedProfiles() throws {
        let directory = ShippedProfiles.directory
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".json") }
        #expect(files.count >= 4)
        for file in files {
            let profile = try SoakProfile.load(contentsOf: directory.appendingPathComponent(file))
            _ = try EmbeddedBackend.configuration(for: profile)
            #expect(file == "\(profile.name).json")
        }
    }

    @Test(
        "a bad backend section fails at load, its path prefixed backend.",
        arguments: [
            (
                #"{"limits": {"match": {"limit": 0, "windowSeconds": 1}}}"#,
                "backend: limits.match.limit must be at least 1"
            ),
            (
                #"{"match": {"platformWeight": 9223372036854775, "ipWeight": 7}}"#,
                "backend: match.platformWeight 9223372036854775 is not within 0...1000000"
            ),
            (
                // Above 2^53: kept exact, so the range is reported (not "not valid JSON").
                #"{"match": {"platformWeight": 9223372036854775807, "ipWeight": 1}}"#,
                "backend: match.platformWeight 9223372036854775807 is not within 0...1000000"
            ),
            (
                #"{"limts": {}}"#,
                "backend.limts: unknown field (expected one of host, port, trustForwardedFor, limits, faults, fixtures, match, rotationGraceSeconds, deviceIdleSeconds)"
            ),
            (
                #"{"limits": {"evnts": {}}}"#,
                "backend.limits.evnts: unknown field (expected one of match, data, session_identity, events, enabled, algorithm)"
            ),
            (
                #"{"limits": {"events": {"limt": 5}}}"#,
                "backend.limits.events.limt: unknown field (expected one of limit, windowSeconds)"
            ),
            (
                #"{"limits": {"events": {"limit": "5", "windowSeconds": 1}}}"#,
                "backend.limits.events.limit: wrong type (expected a number)"
            ),
        ])
    func badBackend(section: String, expected: String) throws {
        let json = Self.replacing(#""name": "t","#, with: #""name": "t", "backend": \#(section),"#)
        #expect(Self.message(json) == expected)
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("smoke-\(UUID().uuidString).json")
        try Data(json.utf8).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        #expect(throws: SoakProfileError(message: "\(url.lastPathComponent): \(expected)")) {
            try SoakProfile.load(contentsOf: url)
        }
    }

    @Test("flag overrides apply; --rate on a closed model is refused")
    func overrides() throws {
        var options = SoakRunOptions(profilePath: "x")
        options.devices = 9
        options.rate = 40
        options.duration = 3
        let profile = try options.apply(to: SoakProfile.decode(Data(Self.valid.utf8)))
        #expect(profile.devices.count == 9)
        #expect(profile.load.stages == [.init(duration: 3, target: 40)])
        #expect(profile.load.startRate == 40)
        var closed = try SoakProfile.decode(Data(Self.valid.utf8))
        closed.load.model = .closed
        #expect(throws: SoakProfileError.self) { try options.apply(to: closed) }
    }
}

/// Profile validation reports every problem in one pass (issue 10: five mistakes took a new
/// user five round trips).
@Suite("Profile validation: every problem in one pass")
struct ProfileAllProblemsTests {
    /// Six kinds of mistake in one profile: an unknown key, a wrong type, a bad unit, an
    /// out-of-range value, a duplicate key, and an unknown step kind (the kind not named in
    /// the issue), spread over every section and two journeys.
    static let sixMistakes = #"""
        {"name": "many-mistakes", "seed": "three",
         "devices": {"count": 5, "clipbordSurvives": 1},
         "journeys": [
           {"name": "a", "steps": [{"kind": "firstLaunch"}, {"kind": "clik", "link": "promo"}]},
           {"name": "b", "steps": [{"kind": "firstLaunch"}]}
         ],
         "load": {"model": "open", "startRate": 1, "stages": [{"duration": 5, "target": 1}], "grace": 3, "grace": 4},
         "sdk": {"timeout": 900},
         "expect": {"limits": {"match": "10/2 fortnights per ip"}}}
        """#

    @Test("six mistakes give one error that lists all six, each naming its JSON path")
    func sixMistakesInOnePass() throws {
        do {
            _ = try SoakProfile.decode(Data(Self.sixMistakes.utf8))
            Issue.record("the profile was accepted")
        } catch let error as SoakProfileError {
            #expect(error.problems.count == 6, "\(error.problems)")
            let expected = [
                ("load.grace: duplicate key", "duplicate key"),
                ("seed: ", "wrong type"),
                ("devices.clipbordSurvives: unknown field", "unknown key"),
                ("journeys[0].steps[1]", "unknown step kind"),
                ("sdk.timeout: must be 0.1…600 seconds", "out of range"),
                ("expect.limits.match", "bad unit"),
            ]
            for (prefix, kind) in expected {
                #expect(error.problems.contains { $0.hasPrefix(prefix) }, "\(kind): \(error.problems)")
            }
            #expect(error.problems.contains { $0.contains("clik") })
            #expect(error.problems.contains { $0.contains("fortnights") })
            #expect(error.message.hasPrefix("6 problems:\n"))
            #expect(error.message.split(separator: "\n").count == 7)
        }
    }

    @Test("a problem in every element of a list is reported per element")
    func everyElementOfAList() throws {
        let json = #"""
            {"name": "lists",
             "devices": {"count": 1},
             "journeys": [
               {"name": "", "steps": [{"kind": "firstLaunch"}]},
               {"name": "b", "weight": -1, "steps": [{"kind": "firstLaunch"}, {"kind": "wait", "seconds": 9999}]},
               {"name": "c", "steps": [{"kind": "firstLaunch"}, {"kind": "event", "name": "e", "colour": "red"}]}
             ],
             "load": {"model": "open", "stages": [{"duration": 0, "target": 1}, {"duration": 1, "target": -5}]}}
            """#
        Self.expectExactly(
            [
                "journeys[0].name: must not be empty", "journeys[1].weight: must be > 0",
                "journeys[1].steps[1].seconds: must be 0…3600 seconds", "journeys[2].steps[1].colour: unknown field",
                "load.stages[0].duration: must be 0.001…604800 seconds", "load.stages[1].target: must be 0…100000",
            ], in: json)
    }

    @Test("every problem of the expect section: each limit, each threshold, the algorithm")
    func everyProblemOfExpect() throws {
        let json = #"""
            {"name": "expect", "devices": {"count": 1},
             "journeys": [{"name": "a", "steps": [{"kind": "firstLaunch"}]}],
             "load": {"model": "closed", "iterations": 1},
             "expect": {"limits": {"match": "10/2s per pi", "events": "40/2 fortnights per key", "data": "5/1s per ip"},
                        "thresholds": ["backoff.early == 0", {"threshold": "http.429 < 5", "delayAbortEval": "5 parsecs"},
                                       "match.call_latncy.p95 < 250ms"],
                        "algorithm": "token_bucket"}}
            """#
        Self.expectExactly(
            [
                "expect.limits.match: '10/2s per pi'", "expect.limits.events: '40/2 fortnights per key'",
                "expect.thresholds[1].delayAbortEval", "expect.thresholds[2]: unknown metric",
                "expect.algorithm: algorithm 'token_bucket'",
            ], in: json)
    }

    /// `json` is refused with exactly these problems, each found by the start of its line.
    static func expectExactly(_ expected: [String], in json: String) {
        do {
            _ = try SoakProfile.decode(Data(json.utf8))
            Issue.record("the profile was accepted")
        } catch {
            let problems = (error as? SoakProfileError)?.problems ?? ["\(error)"]
            for prefix in expected {
                #expect(problems.contains { $0.hasPrefix(prefix) }, "\(prefix): \(problems)")
            }
            #expect(problems.count == expected.count, "\(problems)")
        }
    }

    @Test("a single problem keeps its one-line message")
    func oneProblemOneLine() throws {
        let json =
            #"{"name": "one", "devices": {"count": 0}, "journeys": [{"name": "a", "steps": [{"kind": "firstLaunch"}]}], "load": {"model": "closed", "iterations": 1}}"#
        #expect(throws: SoakProfileError(message: "devices.count: must be 1…1000000")) {
            try SoakProfile.decode(Data(json.utf8))
        }
    }
}
