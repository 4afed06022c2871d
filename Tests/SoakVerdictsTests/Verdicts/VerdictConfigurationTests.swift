import Foundation
import SoakRecords
import Testing

import SoakVerdicts

@Suite struct VerdictConfigurationTests {
    @Test(arguments: [
        ("30/60s per ip", 30, 60.0, DeclaredLimit.Scope.ip, false),
        ("600/60s per key", 600, 60.0, .key, false),
        ("60/60s per key shared", 60, 60.0, .key, true),
        ("5/2s per ip", 5, 2.0, .ip, false),
        ("30/min per ip", 30, 60.0, .ip, false),
        ("500/1s per ip", 500, 1.0, .ip, false),
        ("10/500ms per KEY", 10, 0.5, .key, false),
        ("100/1h per key", 100, 3600.0, .key, false),
    ])
    func parsesDeclaredLimits(text: String, limit: Int, window: Double, scope: DeclaredLimit.Scope, shared: Bool) throws
    {
        let parsed = try DeclaredLimit(parsing: text)
        #expect(parsed == DeclaredLimit(limit: limit, windowSeconds: window, scope: scope, shared: shared))
    }

    @Test(arguments: [
        ("30 per ip", "expected"),
        ("x/60s per ip", "limit 'x'"),
        ("0/60s per ip", "limit '0'"),
        ("30/60 per ip", "window '60'"),
        ("30/-1s per ip", "window"),
        ("30/60s for ip", "expected 'per'"),
        ("30/60s per device", "scope 'device'"),
        ("30/60s per key together", "only 'shared'"),
    ])
    func rejectsMalformedLimits(text: String, fragment: String) {
        do {
            _ = try DeclaredLimit(parsing: text, bucket: "match")
            Issue.record("'\(text)' parsed")
        } catch {
            #expect(String(describing: error).contains(fragment), "\(error)")
            #expect(String(describing: error).contains("expect.limits.match"))
        }
    }

    @Test func decodesTheExpectSection() throws {
        let json = """
            {"limits": {"match": "30/60s per ip", "events": "600/60s per key",
                        "session_identity": "60/60s per key shared"},
             "algorithm": "sliding_window", "backoffToleranceSeconds": 0.5,
             "thresholds": ["backoff.early == 0"]}
            """
        let configuration = try JSONDecoder().decode(VerdictsConfiguration.self, from: Data(json.utf8))
        #expect(configuration.algorithm == .slidingWindow)
        #expect(configuration.limits["match"] == DeclaredLimit(limit: 30, windowSeconds: 60, scope: .ip))
        #expect(configuration.limits["session_identity"]?.shared == true)
        #expect(configuration.backoffToleranceSeconds == 0.5)
        #expect(configuration.edgeToleranceSeconds == 0.01)
        #expect(configuration.thresholds == ["backoff.early == 0"])
        let roundTrip = try JSONDecoder().decode(
            VerdictsConfiguration.self, from: JSONEncoder().encode(configuration))
        #expect(roundTrip == configuration)
        #expect(try JSONDecoder().decode(VerdictsConfiguration.self, from: Data("{}".utf8)) == VerdictsConfiguration())
        let emulatorSpelling = Data(#"{"algorithm": "sliding_log"}"#.utf8)
        #expect(
            try JSONDecoder().decode(VerdictsConfiguration.self, from: emulatorSpelling).algorithm == .slidingWindow)
    }

    @Test(arguments: [
        (#"{"limits": {"match": "30/60s per pi"}}"#, "limits.match"),
        (#"{"limits": {"uploads": "30/60s per ip"}}"#, "unknown bucket 'uploads'"),
        (#"{"algorithm": "token_bucket"}"#, "fixed_window"),
        (#"{"backoffToleranceSeconds": -1}"#, "backoffToleranceSeconds"),
        (#"{"backoffTolerance": 0.5}"#, "unknown field"),
    ])
    func decodingNamesTheBadField(json: String, fragment: String) {
        do {
            _ = try JSONDecoder().decode(VerdictsConfiguration.self, from: Data(json.utf8))
            Issue.record("decoded \(json)")
        } catch {
            #expect(String(describing: error).contains(fragment), "\(error)")
        }
    }

    @Test(arguments: [
        ("match", [ContractEndpoint.match]),
        ("events", [.events]),
        ("session_identity", [.session, .identity, .identityClear]),
        ("session+identity_clear", [.session, .identityClear]),
        ("sdk", [.session, .identity, .identityClear]),
    ])
    func bucketNamesMapToEndpoints(name: String, endpoints: [ContractEndpoint]) throws {
        #expect(try LimitBucket.endpoints(of: name) == endpoints)
    }
}
