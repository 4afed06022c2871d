import SoakSupport
/// One threshold of a profile's `expect.thresholds`: an expression plus how to treat it.
///
/// JSON: a plain string (`"backoff.early == 0"`), or an object
/// `{"threshold": "http.failed.rate == 0", "abortOnFail": true, "delayAbortEval": "5s", "optional": true}`.
/// - `optional`: when the metric's verdict judged nothing (no retry, no write, no limit
///   reached, no request), the threshold is reported "not exercised" but does not fail the run.
///   Without it, "not exercised" fails: a check that judged nothing proves nothing.
/// - `abortOnFail` (as k6): the threshold is also checked every second during the run on the
///   live client-side metrics (requests, statuses, latencies, journeys); the first failure stops
///   the run (stop reason `threshold_aborted`, exit 1). Verdict metrics exist only at the end.
/// - `delayAbortEval`: how long after the start the live checks begin (a duration such as
///   `"5s"`, `"500ms"`; default `"1s"`), so a rate over the first few samples cannot abort.
package struct ThresholdSpec: Sendable, Equatable, Codable, ExpressibleByStringLiteral {
    package var expression: String
    package var optional: Bool
    package var abortOnFail: Bool
    /// Seconds after the run start before `abortOnFail` is checked.
    package var delayAbortEvalSeconds: Double

    package init(
        _ expression: String, optional: Bool = false, abortOnFail: Bool = false, delayAbortEvalSeconds: Double = 1
    ) {
        self.expression = expression
        self.optional = optional
        self.abortOnFail = abortOnFail
        self.delayAbortEvalSeconds = delayAbortEvalSeconds
    }

    package init(stringLiteral value: String) { self.init(value) }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case threshold, optional, abortOnFail, delayAbortEval
    }

    package init(from decoder: any Decoder) throws {
        if let text = try? decoder.singleValueContainer().decode(String.self) {
            self.init(text)
            Self.checkInProfile(text, at: decoder.codingPath)
            return
        }
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        var delay = 1.0
        if let raw = try c.decodeIfPresent(String.self, forKey: .delayAbortEval) {
            guard let seconds = DeclaredLimit.parseDuration(raw), seconds >= 0, seconds.isFinite else {
                throw DecodingError.dataCorruptedError(
                    forKey: .delayAbortEval, in: c,
                    debugDescription: "'\(raw)' is not a duration such as '5s', '500ms' or '1min'")
            }
            delay = seconds
        }
        self.init(
            try c.decode(String.self, forKey: .threshold),
            optional: try c.decodeIfPresent(Bool.self, forKey: .optional) ?? false,
            abortOnFail: try c.decodeIfPresent(Bool.self, forKey: .abortOnFail) ?? false,
            delayAbortEvalSeconds: delay)
        Self.checkInProfile(expression, at: decoder.codingPath)
    }

    /// While a profile is validated (``ProfileIssues``), records the expression's syntax or metric
    /// problem at this threshold's own path, so a list with a broken entry keeps its indices right.
    private static func checkInProfile(_ expression: String, at path: [any CodingKey]) {
        guard let issues = ProfileIssues.current, let problem = Thresholds.problem(in: expression) else { return }
        issues.record(DecodingError.dataCorrupted(.init(codingPath: path, debugDescription: problem)))
    }

    package func encode(to encoder: any Encoder) throws {
        guard optional || abortOnFail || delayAbortEvalSeconds != 1 else {
            var single = encoder.singleValueContainer()
            try single.encode(expression)
            return
        }
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(expression, forKey: .threshold)
        if optional { try c.encode(true, forKey: .optional) }
        if abortOnFail { try c.encode(true, forKey: .abortOnFail) }
        if delayAbortEvalSeconds != 1 { try c.encode("\(delayAbortEvalSeconds)s", forKey: .delayAbortEval) }
    }
}
