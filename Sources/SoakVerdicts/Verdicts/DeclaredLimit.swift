/// One rate limit the run expects the server to enforce, parsed from a profile string such
/// as `"30/60s per ip"`, `"600/60s per key"` or `"60/60s per key shared"` (docs/CONTRACT.md §1, "Rate limits").
///
/// Grammar: `<limit>/<window> per <ip|key> [shared]`, where `<window>` is a positive number with
/// a unit `ms`, `s`, `m`/`min` or `h` (`"60s"`, `"2s"`, `"1min"`, `"500ms"`); a bare unit
/// (`"30/min"`) means one of it. `shared` only documents that several endpoints feed one bucket;
/// which endpoints do is given by the bucket's name (see ``LimitBucket``).
/// Encodes back to the same string form.
package struct DeclaredLimit: Sendable, Equatable, Codable, CustomStringConvertible {
    /// What a bucket key is: the client IP or the API key.
    package enum Scope: String, Sendable, Codable {
        case ip
        case key
    }

    /// Requests accepted per window per bucket key (≥ 1).
    package var limit: Int
    /// Window length in seconds (> 0).
    package var windowSeconds: Double
    package var scope: Scope
    package var shared: Bool

    package init(limit: Int, windowSeconds: Double, scope: Scope, shared: Bool = false) {
        self.limit = limit
        self.windowSeconds = windowSeconds
        self.scope = scope
        self.shared = shared
    }

    /// Parses the profile form.
    /// - Throws: ``VerdictsConfigurationError/invalidLimit(bucket:value:reason:)`` naming the problem.
    package init(parsing text: String, bucket: String = "?") throws {
        func fail(_ reason: String) -> VerdictsConfigurationError {
            .invalidLimit(bucket: bucket, value: text, reason: reason)
        }
        let words = text.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard words.count == 3 || words.count == 4 else {
            throw fail("expected '<limit>/<window> per <ip|key> [shared]', e.g. '30/60s per ip'")
        }
        let rate = words[0].split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard rate.count == 2 else { throw fail("expected '<limit>/<window>' before 'per', e.g. '30/60s'") }
        guard let limit = Int(rate[0]), limit >= 1 else {
            throw fail("limit '\(rate[0])' is not a whole number ≥ 1")
        }
        guard let window = Self.parseDuration(rate[1]), window > 0, window.isFinite else {
            throw fail("window '\(rate[1])' is not a positive duration such as '60s', '2s', '500ms' or '1min'")
        }
        guard (0.001...31_536_000).contains(window) else {
            throw fail("window '\(rate[1])' is not within 1ms…365d")
        }
        guard words[1].lowercased() == "per" else { throw fail("expected 'per' after '\(words[0])'") }
        guard let scope = Scope(rawValue: words[2].lowercased()) else {
            throw fail("scope '\(words[2])' must be 'ip' or 'key'")
        }
        var shared = false
        if words.count == 4 {
            guard words[3].lowercased() == "shared" else {
                throw fail("unexpected '\(words[3])' (only 'shared' may follow)")
            }
            shared = true
        }
        self.init(limit: limit, windowSeconds: window, scope: scope, shared: shared)
    }

    /// Parses `"60s"`, `"2.5s"`, `"500ms"`, `"1m"`, `"1min"`, `"1h"`, or a bare unit (`"min"`); seconds.
    static func parseDuration(_ text: String) -> Double? {
        let lower = text.lowercased()
        let units: [(String, Double)] = [("ms", 0.001), ("min", 60), ("s", 1), ("m", 60), ("h", 3600)]
        for (suffix, factor) in units where lower.hasSuffix(suffix) {
            let number = lower.dropLast(suffix.count)
            if number.isEmpty { return factor }
            guard let value = Double(number) else { return nil }
            return value * factor
        }
        return nil
    }

    package var description: String {
        let window =
            windowSeconds == windowSeconds.rounded() && abs(windowSeconds) < 1e15
            ? "\(Int(windowSeconds))s" : "\(windowSeconds)s"
        return "\(limit)/\(window) per \(scope.rawValue)" + (shared ? " shared" : "")
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        let bucket = decoder.codingPath.last?.stringValue ?? "?"
        do {
            try self.init(parsing: text, bucket: bucket)
        } catch VerdictsConfigurationError.invalidLimit(_, let value, let reason) {
            // The coding path already names the bucket (`expect.limits.match`).
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "'\(value)': \(reason)")
        } catch let error as VerdictsConfigurationError {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: error.description)
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
