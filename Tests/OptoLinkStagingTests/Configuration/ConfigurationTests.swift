import Foundation
import OptoLinkStaging
import Testing

@Suite struct ConfigurationTests {
    @Test func emptyObjectGivesTheDefaults() throws {
        let configuration = try StagingConfiguration.decode(Data("{}".utf8))
        #expect(configuration == StagingConfiguration())
        #expect(configuration.limits.match == StagingRateLimitRule(limit: 30, windowSeconds: 60))
        #expect(configuration.limits.data == StagingRateLimitRule(limit: 500, windowSeconds: 1))
        #expect(configuration.limits.sdk == StagingRateLimitRule(limit: 60, windowSeconds: 60))
        #expect(configuration.limits.events == StagingRateLimitRule(limit: 600, windowSeconds: 60))
        #expect(configuration.fixtures.orgs.map(\.orgKey) == ["acme", "globex"])
    }

    @Test func partialFileOverridesOnlyItsKeys() throws {
        let json = #"""
            {"port": 8080, "trustForwardedFor": true,
             "limits": {"algorithm": "sliding_log", "match": {"limit": 5, "windowSeconds": 2}},
             "faults": {"seed": 9, "endpoints": {"events": [{"kind": "empty_5xx", "rate": 0.5, "status": 502}]}},
             "fixtures": {"orgs": [{"orgKey": "solo", "apiKeys": [{"key": "opl_sdk_solo"}],
                                    "links": [{"shortCode": "a", "linkId": "lnk_a", "path": "/a"}]}]}}
            """#
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("staging-\(UUID().uuidString).json")
        try Data(json.utf8).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let c = try StagingConfiguration.load(from: url)
        #expect(c.port == 8080 && c.trustForwardedFor)
        #expect(c.limits.algorithm == .slidingLog)
        #expect(c.limits.match == StagingRateLimitRule(limit: 5, windowSeconds: 2))
        #expect(c.limits.events.limit == 600)
        #expect(c.faults.endpoints["events"]?.first?.status == 502)
        #expect(c.fixtures.orgs.first?.apiKeys.first?.tier == .client)
        #expect(c.fixtures.orgs.first?.links.first?.active == true)
    }

    @Test("limits.algorithm takes the profiles' expect.algorithm spelling too: sliding_window = sliding_log")
    func slidingWindowSpelling() throws {
        let decoder = JSONDecoder()
        for (text, algorithm) in [
            ("sliding_window", StagingRateLimitAlgorithm.slidingLog), ("sliding_log", .slidingLog),
            ("fixed_window", .fixedWindow),
        ] {
            let limits = try decoder.decode(StagingLimits.self, from: Data(#"{"algorithm": "\#(text)"}"#.utf8))
            #expect(limits.algorithm == algorithm, "\(text)")
        }
        #expect(throws: DecodingError.self) {
            try decoder.decode(StagingLimits.self, from: Data(#"{"algorithm": "sliding"}"#.utf8))
        }
    }

    @Test(arguments: [
        (#"{"port": "x"}"#, "port"),
        (#"{"limits": {"match": {"limit": 0, "windowSeconds": 1}}}"#, "limits.match.limit"),
        (#"{"faults": {"endpoints": {"events": [{"kind": "nope", "rate": 1}]}}}"#, "faults"),
        (#"{"fixtures": {"orgs": [{"orgKey": "a"}, {"orgKey": "a"}]}}"#, "duplicate orgKey"),
        // Weights whose sum overflowed the scored matcher and killed the server on the first /match.
        (#"{"match": {"platformWeight": 9223372036854775807, "osVersionWeight": 1}}"#, "match.platformWeight"),
        (
            #"{"match": {"platformWeight": 4000000000000000000, "languageWeight": 4000000000000000000}}"#,
            "match.languageWeight"
        ),
        (#"{"match": {"scoredThreshold": -1}}"#, "match.scoredThreshold"),
        (#"{"match": {"clickTTLSeconds": 1e308}}"#, "match.clickTTLSeconds"),
        (#"{"match": {"ipFuzzyWindowSeconds": -5}}"#, "match.ipFuzzyWindowSeconds"),
        ("not json", "not valid JSON"),
    ])
    func badFilesAreClearErrors(json: String, mentions: String) {
        #expect {
            try StagingConfiguration.decode(Data(json.utf8), source: "x.json")
        } throws: { error in
            let message = (error as? StagingConfigurationError)?.message ?? ""
            return message.hasPrefix("x.json: ") && message.contains(mentions)
        }
    }

    /// Typos anywhere are errors naming the full path and the allowed keys, never silently defaults.
    @Test(arguments: [
        (
            #"{"limts": {}}"#,
            "x.json: limts: unknown field (expected one of host, port, trustForwardedFor, limits, faults, fixtures, match, rotationGraceSeconds, deviceIdleSeconds)"
        ),
        (
            #"{"limits": {"evnts": {"limit": 1, "windowSeconds": 1}}}"#,
            "x.json: limits.evnts: unknown field (expected one of match, data, session_identity, events, enabled, algorithm)"
        ),
        (
            #"{"limits": {"events": {"limt": 5}}}"#,
            "x.json: limits.events.limt: unknown field (expected one of limit, windowSeconds)"
        ),
        (
            #"{"limits": {"events": {"limit": "5", "windowSeconds": 1}}}"#,
            "x.json: limits.events.limit: wrong type (expected a number)"
        ),
        (#"{"limits": {"events": {"limit": 5}}}"#, "x.json: limits.events.windowSeconds: missing required field"),
        (
            #"{"limits": {"algorithm": "leaky"}}"#,
            #"x.json: limits.algorithm: unknown value "leaky" (expected one of fixed_window, sliding_log)"#
        ),
        (
            #"{"match": {"ipWeigth": 5}}"#,
            "x.json: match.ipWeigth: unknown field (expected one of clickTTLSeconds, ipFuzzyWindowSeconds, scoredThreshold, platformWeight, ipWeight, osVersionWeight, languageWeight, timezoneWeight)"
        ),
        (
            #"{"faults": {"endpoints": {"events": [{"kind": "html_502", "rate": 1, "delay": 3}]}}}"#,
            "x.json: faults.endpoints.events[0].delay: unknown field (expected one of kind, rate, status, delaySeconds, afterCommit)"
        ),
        (
            #"{"faults": {"seeed": 1}}"#,
            "x.json: faults.seeed: unknown field (expected one of seed, endpoints, outages)"
        ),
        (
            #"{"fixtures": {"orgs": [{"orgKey": "a", "apiKeys": [{"key": "k", "tier": "client"}]}]}}"#,
            #"x.json: fixtures.orgs[0].apiKeys[0].tier: unknown value "client" (expected one of CLIENT, SERVER)"#
        ),
        (
            #"{"fixtures": {"orgs": [{"orgKey": "a", "links": [{"shortCode": "s", "linkId": "l", "path": "/", "param": {}}]}]}}"#,
            "x.json: fixtures.orgs[0].links[0].param: unknown field (expected one of shortCode, linkId, path, params, active)"
        ),
        (
            #"{"fixtures": {"orgs": [{"orgKey": "a", "ios": {"bundleId": "b", "teamID": "T"}}]}}"#,
            "x.json: fixtures.orgs[0].ios.teamID: unknown field (expected one of teamId, bundleId, customHosts)"
        ),
        (#"{"fixtures": {"org": []}}"#, "x.json: fixtures.org: unknown field (expected one of orgs)"),
    ])
    func unknownKeysAndWrongTypesNameThePath(json: String, expected: String) {
        #expect(throws: StagingConfigurationError(message: expected)) {
            try StagingConfiguration.decode(Data(json.utf8), source: "x.json")
        }
    }

    @Test func unreadableFileNamesThePath() {
        #expect(throws: StagingConfigurationError.self) {
            try StagingConfiguration.load(from: URL(fileURLWithPath: "/nonexistent/staging.json"))
        }
    }

    @Test func configurationRoundTripsThroughJSON() throws {
        var c = StagingConfiguration(trustForwardedFor: true)
        c.faults = StagingFaults(
            seed: 5, endpoints: ["match": [StagingFaultRule(kind: .latency, rate: 0.1, delaySeconds: 3)]])
        let data = try JSONEncoder().encode(c)
        #expect(try StagingConfiguration.decode(data) == c)
    }

    @Test func jsonWriterEscapes() {
        var w = JSONWriter()
        w.beginObject()
        w.field("a\"b", "line\nbreak\\ \u{01} é")
        w.key("n")
        w.int(-3)
        w.key("list")
        w.beginArray()
        w.bool(true)
        w.null()
        w.endArray()
        w.endObject()
        let text = String(decoding: w.bytes, as: UTF8.self)
        #expect(text == #"{"a\"b":"line\nbreak\\ \u0001 é","n":-3,"list":[true,null]}"#)
        #expect((try? JSONSerialization.jsonObject(with: Data(w.bytes))) != nil)
    }
}

@Suite struct ExampleProfileTests {
    /// The committed example must stay loadable and describe the built-in fixtures.
    @Test func exampleFileLoadsAndMatchesTheDefaultFixtures() throws {
        let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
            .appendingPathComponent("Profiles/staging/emulator.example.json")
        let configuration = try StagingConfiguration.load(from: url)
        #expect(configuration.fixtures == StagingFixtures.default)
        #expect(configuration.limits == StagingLimits())
        #expect(configuration.match == StagingMatchSettings())
        #expect(configuration.faults.endpoints["events"]?.count == 3)
        #expect(configuration.trustForwardedFor)
        #expect(configuration.deviceIdleSeconds == StagingConfiguration().deviceIdleSeconds)
    }
}

/// Hostile numbers in configuration or admin bodies are refused or clamped, never trapped on.
@Suite struct HostileNumberTests {
    @Test func extremeValuesNeverTrap() {
        #expect(RateLimiter.wholeSeconds(.infinity) == 1_000_000_000)
        #expect(RateLimiter.wholeSeconds(.nan) == 1)
        #expect(RateLimiter.wholeSeconds(1e300) == 1_000_000_000)
        #expect(StagingBackend.latency(1e300) == .seconds(3600))
        #expect(StagingBackend.latency(.nan) == .zero)
        #expect(StagingBackend.latency(nil) == .seconds(15))
    }

    @Test func extremeValuesAreRefusedByValidation() throws {
        var c = StagingConfiguration()
        c.limits.match.windowSeconds = 1e300
        c.faults = StagingFaults(endpoints: ["events": [StagingFaultRule(kind: .latency, rate: 1, delaySeconds: 1e300)]]
        )
        let problems = c.problems()
        #expect(problems.contains { $0.contains("limits.match.windowSeconds") })
        #expect(problems.contains { $0.contains("delaySeconds") })
        let h = BackendHarness()
        let put = try h.respond(
            "PUT", "/__admin/limits", rawBody: Array(#"{"match":{"limit":1,"windowSeconds":1e300}}"#.utf8))
        #expect(put.status == 400)
    }

    @Test func adminBodiesAreStrictAndNameTheUnknownKey() throws {
        let h = BackendHarness()
        let put = try h.respond(
            "PUT", "/__admin/limits", rawBody: Array(#"{"mtch":{"limit":1,"windowSeconds":1}}"#.utf8))
        #expect(put.status == 400)
        #expect(put.text.contains("body is not a valid StagingLimits: mtch: unknown field (expected one of match,"))
        let faults = try h.respond(
            "PUT", "/__admin/faults", rawBody: Array(#"{"endpoints":{"events":[{"kind":"html_502","rat":1}]}}"#.utf8))
        #expect(faults.status == 400)
        #expect(faults.text.contains("endpoints.events[0].rat: unknown field"))
    }
}
