import SoakSupport
/// The profile's `expect` section: declared rate limits and their window algorithm, back-off
/// tolerances and threshold expressions (the inputs of the verdicts that are not records).
///
/// JSON shape (every key optional):
/// ```json
/// {"limits": {"match": "30/60s per ip", "events": "600/60s per key",
///             "session_identity": "60/60s per key shared"},
///  "algorithm": "fixed_window",
///  "backoffToleranceSeconds": 0.25, "edgeToleranceSeconds": 0.01, "lateStartLimit": 0.01,
///  "thresholds": ["backoff.early == 0", "match.call_latency.p95 < 250ms"],
///  "regression": ["match.call_latency.p95 < baseline * 1.10", "backoff.early == 0"]}
/// ```
/// Decoding fails with a message naming the field on an unknown key, a malformed limit, an
/// unknown bucket or an unknown algorithm.
package struct VerdictsConfiguration: Sendable, Codable, Equatable {
    /// How the server counts requests in a window (docs/CONTRACT.md §1, "Rate limits").
    package enum WindowAlgorithm: String, Sendable, Codable {
        /// As @nestjs/throttler: a key's window opens at its first hit and lasts the window
        /// length; the first `limit` hits pass, the rest get 429 until it closes.
        case fixedWindow = "fixed_window"
        /// A request passes when fewer than `limit` accepted requests arrived in the
        /// preceding window length.
        case slidingWindow = "sliding_window"
    }

    /// k6-style thresholds, e.g. `"match.call_latency.p95 < 250ms"` (see ``ThresholdSpec``).
    package var thresholds: [ThresholdSpec]
    /// `compare`'s rules against a baseline run (``RegressionRule``), e.g.
    /// `"match.call_latency.p95 < baseline * 1.10"`. Empty: the default rule (`docs/COMPARE.md`).
    package var regression: [String] = []
    /// Bucket name → declared limit (see ``LimitBucket`` for names). Empty: no limit oracle.
    package var limits: [String: DeclaredLimit]
    package var algorithm: WindowAlgorithm
    /// How late a retry may start after its expected back-off and still be "on time"; seconds.
    package var backoffToleranceSeconds: Double
    /// How much earlier than the expected back-off a retry may start before it counts as
    /// early (absorbs timestamp rounding); seconds.
    package var backoffEarlySlackSeconds: Double
    /// Client timestamps are not server arrival times: each attempt reached the server somewhere
    /// between its start and end, and the server measures window lengths on its own clock. Hits
    /// within this many seconds (plus 0.05 % of the window, for clock-rate drift) of a window
    /// edge are classified "ambiguous" instead of being judged.
    package var edgeToleranceSeconds: Double
    /// How many worst offenders each verdict lists.
    package var worstOffenderCount: Int
    /// The share of started journeys that may start late (after the run's late threshold) before
    /// the report says the load generator, not the backend, was the limit; `nil`: the default,
    /// ``defaultLateStartLimit``. Left out of the profile's JSON when not set.
    package var lateStartLimit: Double? = nil

    /// 1 %: beyond it the arrival schedule, not the backend, shapes the figures.
    package static let defaultLateStartLimit = 0.01

    /// ``lateStartLimit`` or its default.
    package var effectiveLateStartLimit: Double { lateStartLimit ?? Self.defaultLateStartLimit }

    package init(
        thresholds: [ThresholdSpec] = [],
        limits: [String: DeclaredLimit] = [:],
        algorithm: WindowAlgorithm = .fixedWindow,
        backoffToleranceSeconds: Double = 0.25,
        backoffEarlySlackSeconds: Double = 0.001,
        edgeToleranceSeconds: Double = 0.01,
        worstOffenderCount: Int = 10
    ) {
        self.thresholds = thresholds
        self.limits = limits
        self.algorithm = algorithm
        self.backoffToleranceSeconds = backoffToleranceSeconds
        self.backoffEarlySlackSeconds = backoffEarlySlackSeconds
        self.edgeToleranceSeconds = edgeToleranceSeconds
        self.worstOffenderCount = worstOffenderCount
    }

    /// Checks what decoding cannot: bucket names and non-negative tolerances.
    /// - Throws: ``VerdictsConfigurationError`` naming the field.
    package func validate() throws {
        for name in limits.keys.sorted() { _ = try LimitBucket.endpoints(of: name) }
        for (field, value) in [
            ("backoffToleranceSeconds", backoffToleranceSeconds),
            ("backoffEarlySlackSeconds", backoffEarlySlackSeconds),
            ("edgeToleranceSeconds", edgeToleranceSeconds),
        ] where !(value >= 0 && value.isFinite) {
            throw VerdictsConfigurationError.invalidValue(field: field, reason: "must be a finite number ≥ 0")
        }
        if worstOffenderCount < 0 {
            throw VerdictsConfigurationError.invalidValue(field: "worstOffenderCount", reason: "must be ≥ 0")
        }
        if let lateStartLimit, !(0...1).contains(lateStartLimit) {
            throw VerdictsConfigurationError.invalidValue(
                field: "lateStartLimit", reason: "must be a share of started journeys, 0…1 (0.01 = 1 %)")
        }
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case thresholds, regression, limits, algorithm, backoffToleranceSeconds, backoffEarlySlackSeconds
        case edgeToleranceSeconds, worstOffenderCount, lateStartLimit
    }

    package init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = VerdictsConfiguration()
        // Each field and each list entry on its own: in a profile, every problem is reported at once.
        thresholds =
            c.contains(.thresholds) ? try c.decodeEach(ThresholdSpec.self, forKey: .thresholds) : defaults.thresholds
        regression = try c.decodeFieldIfPresent([String].self, forKey: .regression) ?? []
        for (index, rule) in regression.enumerated() {
            do {
                _ = try RegressionRule(rule)
            } catch {
                try c.reportOrThrow(
                    DecodingError.dataCorrupted(
                        .init(
                            codingPath: decoder.codingPath + [CodingKeys.regression, AnyCodingKey(intValue: index)],
                            debugDescription: "\(error)")))
            }
        }
        limits = c.contains(.limits) ? try c.decodeEachValue(DeclaredLimit.self, forKey: .limits) : defaults.limits
        algorithm = defaults.algorithm
        if let raw = try c.decodeFieldIfPresent(String.self, forKey: .algorithm) {
            if let algorithm = WindowAlgorithm(rawValue: raw == "sliding_log" ? "sliding_window" : raw) {
                self.algorithm = algorithm
            } else {
                try c.reportOrThrow(
                    DecodingError.dataCorruptedError(
                        forKey: .algorithm, in: c,
                        debugDescription:
                            "algorithm '\(raw)' must be 'fixed_window' or 'sliding_window' (or 'sliding_log')"))
            }
        }
        backoffToleranceSeconds =
            try c.decodeFieldIfPresent(Double.self, forKey: .backoffToleranceSeconds)
            ?? defaults.backoffToleranceSeconds
        backoffEarlySlackSeconds =
            try c.decodeFieldIfPresent(Double.self, forKey: .backoffEarlySlackSeconds)
            ?? defaults.backoffEarlySlackSeconds
        edgeToleranceSeconds =
            try c.decodeFieldIfPresent(Double.self, forKey: .edgeToleranceSeconds) ?? defaults.edgeToleranceSeconds
        worstOffenderCount =
            try c.decodeFieldIfPresent(Int.self, forKey: .worstOffenderCount) ?? defaults.worstOffenderCount
        lateStartLimit = try c.decodeFieldIfPresent(Double.self, forKey: .lateStartLimit)
        do {
            try validate()
        } catch let error as VerdictsConfigurationError {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: error.description))
        }
    }
}

/// Why an `expect` section is unusable.
package enum VerdictsConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    case invalidLimit(bucket: String, value: String, reason: String)
    case unknownBucket(String)
    case invalidValue(field: String, reason: String)

    package var description: String {
        switch self {
        case .invalidLimit(let bucket, let value, let reason):
            "expect.limits.\(bucket): '\(value)': \(reason)"
        case .unknownBucket(let name):
            "expect.limits: unknown bucket '\(name)' (use match, data, events, session_identity, "
                + "or endpoint names joined with '+')"
        case .invalidValue(let field, let reason):
            "expect.\(field): \(reason)"
        }
    }
}
