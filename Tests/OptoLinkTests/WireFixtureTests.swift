import Foundation
import OptoLink
import OptoLinkTestSupport
import Testing

/// The seeds' exact wire bodies (seed 000 / 002, docs/CONTRACT.md §1) through the public API.
@Suite(.timeLimit(.minutes(1)))
struct WireFixtureTests {
    /// Makes one `trackEvent` call (no retries) answered by `status`/`body`; returns the error.
    func apiError(status: Int, body: String, endpoint: OptoLinkEndpoint = .events) async throws -> OptoLinkApiError {
        let transport = StubTransport()
        transport.enqueue([.status(status, body)], for: endpoint)
        let sdk = OptoLink(config: Fixture.config(maxRetries: 0), environment: Fixture.environment(transport))
        do {
            try await sdk.trackEvent(name: "open")
            Issue.record("expected a throw")
            throw CancellationError()
        } catch let error as OptoLinkApiError {
            return error
        }
    }

    func deferred(_ body: String) async throws -> OptoLinkData? {
        let transport = StubTransport()
        transport.enqueue([.status(201, body)], for: .match)
        let sdk = OptoLink(config: Fixture.config(), environment: Fixture.environment(transport))
        return try await sdk.resolveDeferredLink()
    }

    @Test func missBodyIsNil() async throws {
        #expect(try await deferred(Fixture.missBody) == nil)
    }

    @Test func hitWithLowercaseConfidence() async throws {
        let link = try #require(try await deferred(Fixture.hitLowercaseBody))
        #expect(
            link
                == OptoLinkData(
                    linkId: "lnk_welcome", path: "/welcome", params: ["campaign": "spring"],
                    matchMethod: .fingerprintExact, confidence: .high, isDeferred: true, score: nil))
    }

    @Test func scoreOnlyForFingerprintScored() async throws {
        let scored = try #require(
            try await deferred(
                #"{"matched":true,"matchMethod":"fingerprint_scored","matchConfidence":"medium","matchScore":72,"linkId":"l","path":"/p","params":null}"#
            ))
        #expect(scored.matchMethod == .fingerprintScored)
        #expect(scored.score == 72)
        #expect(scored.params == nil)
        let exact = try #require(
            try await deferred(
                #"{"matched":true,"matchMethod":"CLIPBOARD","matchConfidence":"exact","matchScore":99,"linkId":"l","path":"/p","params":{}}"#
            ))
        #expect(exact.score == nil)
        #expect(exact.confidence == .exact)
    }

    @Test func unknownWireEnumsDecodeToNoneAndMedium() async throws {
        let link = try #require(
            try await deferred(
                #"{"matched":true,"matchMethod":"QUANTUM","matchConfidence":"sure","linkId":"l","path":"/p","params":{"a":"b"}}"#
            ))
        #expect(link.matchMethod == .none)
        #expect(link.confidence == .medium)
        #expect(MatchMethod(wireValue: "ip_fuzzy") == .ipFuzzy)
        #expect(MatchConfidence(wireValue: "LOW") == .low)
        let decoded = try JSONDecoder().decode([MatchConfidence].self, from: Data(#"["high","odd"]"#.utf8))
        #expect(decoded == [.high, .medium])
    }

    /// docs/CONTRACT.md §2, deferred match: a 2xx whose body is not a match result is a network
    /// failure of the match (a connection-kind error), not an API error with a 2xx status.
    @Test(arguments: ["not json", #"{"linkId":"l"}"#, #"["matched"]"#, ""])
    func malformedMatchBodyIsAConnectionError(_ body: String) async throws {
        let error = await #expect(throws: OptoLinkConnectionError.self) { try await deferred(body) }
        #expect(error?.underlying.code == .cannotParseResponse)
    }

    @Test func envelopeWithRequestId() async throws {
        let error = try await apiError(status: 404, body: Fixture.notFoundEnvelope)
        #expect(error.status == 404)
        #expect(error.requestId == "req-123")
        #expect(error.details == nil)
        #expect(error.retryAfterSeconds == nil)
        #expect(error.raw == Fixture.notFoundEnvelope)
        #expect(error.errorDescription == "Link not found")
        #expect(error.shortDescription == "http_404")
    }

    @Test func envelopeWithDetailsAndNoRequestId() async throws {
        let error = try await apiError(status: 400, body: Fixture.validationEnvelope)
        #expect(error.requestId == nil)
        #expect(
            error.details == [
                OptoLinkErrorDetail(message: "properties must be at most 10240 bytes", field: "properties"),
                OptoLinkErrorDetail(message: "bad", field: nil),
            ])
        #expect(error.errorDescription == "Validation failed")
    }

    @Test func detailsAreIgnoredOutside400() async throws {
        let body = #"{"statusCode":409,"message":"Conflict","details":[{"message":"x"}]}"#
        let error = try await apiError(status: 409, body: body)
        #expect(error.details == nil)
    }

    @Test func proxyHTML502KeepsRawVerbatim() async throws {
        #expect(Fixture.nginx502.utf8.count == 157)
        let error = try await apiError(status: 502, body: Fixture.nginx502)
        #expect(error.raw == Fixture.nginx502)
        #expect(error.requestId == nil)
        #expect(error.errorDescription == "OptoLink request failed with status 502")
        #expect(error.localizedDescription == "OptoLink request failed with status 502")
    }

    @Test func emptyBody() async throws {
        let error = try await apiError(status: 503, body: "")
        #expect(error.raw == "")
        #expect(error.errorDescription == "OptoLink request failed with status 503")
    }

    @Test(arguments: [("1 second", 1), ("17 seconds", 17), ("3 second(s)", 3)])
    func retryAfterIsParsedFrom429(_ text: String, _ seconds: Int) async throws {
        let error = try await apiError(status: 429, body: Fixture.rateLimited(text))
        #expect(error.retryAfterSeconds == seconds)
        #expect(error.errorDescription == "Rate limit exceeded. Retry after \(text).")
    }

    @Test func retryAfterOnlyOn429() async throws {
        let error = try await apiError(status: 503, body: Fixture.rateLimited("5 seconds"))
        #expect(error.retryAfterSeconds == nil)
        let noNumber = try await apiError(status: 429, body: #"{"message":"Retry after soon seconds"}"#)
        #expect(noNumber.retryAfterSeconds == nil)
        let plain = try await apiError(status: 429, body: "Rate limit exceeded. Retry after 9 seconds.")
        #expect(plain.retryAfterSeconds == 9, "a non-JSON 429 body is searched as text")
    }

    @Test func connectionErrorLabels() {
        #expect(OptoLinkConnectionError(underlying: URLError(.timedOut)).shortDescription == "timed_out")
        #expect(
            OptoLinkConnectionError(underlying: URLError(.networkConnectionLost)).shortDescription == "connection_lost")
        #expect(
            OptoLinkConnectionError(underlying: URLError(.cannotConnectToHost)).errorDescription
                == "OptoLink request got no response (connection_refused)")
    }
}
