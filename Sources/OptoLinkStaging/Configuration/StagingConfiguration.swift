import Foundation
import SoakSupport

/// Everything the emulator needs to start: bind address, rate limits, faults, fixtures and
/// match tunables. Every key of the JSON form is optional; missing keys take the defaults;
/// an unknown key anywhere is an error naming its path and the allowed keys.
///
/// JSON example: `{"port": 8080, "trustForwardedFor": true, "limits": {"match": {"limit": 5,
/// "windowSeconds": 2}}, "faults": {"seed": 7, "endpoints": {"events": [{"kind": "html_502", "rate": 0.05}]}}}`.
public struct StagingConfiguration: Sendable, Codable, Equatable {
    /// The address to bind (`127.0.0.1` or `::1`).
    public var host: String
    /// The TCP port; 0 picks a free one (read it from ``StagingServer/port``).
    public var port: Int
    /// Take the client IP from the first `X-Forwarded-For` address instead of the socket peer
    /// (how one load machine stands in for many devices' IPs).
    public var trustForwardedFor: Bool
    /// Rate limits per bucket and the algorithm (docs/CONTRACT.md §1, "Rate limits").
    public var limits: StagingLimits
    /// Fault rules in force at start (change them later with ``StagingServer/setFaults(_:)``).
    public var faults: StagingFaults
    /// Orgs, keys, iOS app configs and links; ``StagingFixtures/default`` when absent.
    public var fixtures: StagingFixtures
    /// Windows, weights and threshold of the match ladder (docs/CONTRACT.md §4).
    public var match: StagingMatchSettings
    /// How long a rotated-out CLIENT key keeps working, in seconds (default 24 h).
    public var rotationGraceSeconds: Double
    /// Seconds after its last request a device is forgotten (default 1 h), so a long run's
    /// registry stays bounded; a forgotten device is registered again by its next session
    /// check-in or match, like a new install.
    public var deviceIdleSeconds: Double

    /// A configuration; every argument defaults to the built-in value (loopback, port 0, contract limits, no faults).
    public init(
        host: String = "127.0.0.1", port: Int = 0, trustForwardedFor: Bool = false, limits: StagingLimits = .init(),
        faults: StagingFaults = .none, fixtures: StagingFixtures = .default, match: StagingMatchSettings = .init(),
        rotationGraceSeconds: Double = 86_400, deviceIdleSeconds: Double = 3_600
    ) {
        self.deviceIdleSeconds = deviceIdleSeconds
        self.host = host
        self.port = port
        self.trustForwardedFor = trustForwardedFor
        self.limits = limits
        self.faults = faults
        self.fixtures = fixtures
        self.match = match
        self.rotationGraceSeconds = rotationGraceSeconds
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case host, port, trustForwardedFor, limits, faults, fixtures, match, rotationGraceSeconds, deviceIdleSeconds
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
        let d = StagingConfiguration()
        host = try c.decodeIfPresent(String.self, forKey: .host) ?? d.host
        port = try c.decodeIfPresent(Int.self, forKey: .port) ?? d.port
        trustForwardedFor = try c.decodeIfPresent(Bool.self, forKey: .trustForwardedFor) ?? d.trustForwardedFor
        limits = try c.decodeIfPresent(StagingLimits.self, forKey: .limits) ?? d.limits
        faults = try c.decodeIfPresent(StagingFaults.self, forKey: .faults) ?? d.faults
        fixtures = try c.decodeIfPresent(StagingFixtures.self, forKey: .fixtures) ?? d.fixtures
        match = try c.decodeIfPresent(StagingMatchSettings.self, forKey: .match) ?? d.match
        rotationGraceSeconds =
            try c.decodeIfPresent(Double.self, forKey: .rotationGraceSeconds) ?? d.rotationGraceSeconds
        deviceIdleSeconds = try c.decodeIfPresent(Double.self, forKey: .deviceIdleSeconds) ?? d.deviceIdleSeconds
    }

    /// Reads and validates a configuration JSON file.
    ///
    /// - Throws: ``StagingConfigurationError`` when the file cannot be read, is not valid
    ///   JSON of this shape, or holds values out of range (each problem named).
    public static func load(from url: URL) throws -> StagingConfiguration {
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw StagingConfigurationError(message: "cannot read \(url.path): \(error.localizedDescription)")
        }
        return try decode(data, source: url.path)
    }

    /// Decodes and validates configuration JSON.
    ///
    /// - Throws: ``StagingConfigurationError`` naming the offending key or value.
    public static func decode(_ data: Data, source: String = "configuration") throws -> StagingConfiguration {
        let configuration: StagingConfiguration
        if (try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])) != nil,
            let duplicate = duplicateKeyProblem(in: data)
        {
            throw StagingConfigurationError(message: "\(source): \(duplicate)")
        }
        do { configuration = try JSONDecoder().decode(StagingConfiguration.self, from: data) } catch let error
            as DecodingError
        {
            throw StagingConfigurationError(message: "\(source): \(error.readableDescription)")
        } catch {
            throw StagingConfigurationError(message: "\(source): \(error.localizedDescription)")
        }
        let problems = configuration.problems()
        if !problems.isEmpty {
            throw StagingConfigurationError(message: "\(source): " + problems.joined(separator: "; "))
        }
        return configuration
    }

    /// Values that make this configuration unusable; empty when it is valid.
    public func problems() -> [String] {
        var problems: [String] = []
        if !(0...65_535).contains(port) { problems.append("port \(port) is not within 0...65535") }
        for bucket in StagingBucketClass.allCases {
            let rule = limits.rule(for: bucket)
            if rule.limit < 1 { problems.append("limits.\(bucket.rawValue).limit must be at least 1") }
            if !(rule.windowSeconds > 0 && rule.windowSeconds <= 31_536_000) {
                problems.append("limits.\(bucket.rawValue).windowSeconds must be within (0, 31536000]")
            }
        }
        problems += faults.problems()
        problems += match.problems()
        var orgKeys = Set<String>()
        var keys = Set<String>()
        for org in fixtures.orgs {
            if org.orgKey.isEmpty || org.orgKey.contains("/") {
                problems.append("fixtures: bad orgKey '\(org.orgKey)'")
            }
            if !orgKeys.insert(org.orgKey).inserted { problems.append("fixtures: duplicate orgKey '\(org.orgKey)'") }
            for key in org.apiKeys where !keys.insert(key.key).inserted {
                problems.append("fixtures: duplicate API key \(SecretRedaction.redact(key.key))")
            }
            var codes = Set<String>()
            for link in org.links where !codes.insert(link.shortCode).inserted || link.shortCode.contains("/") {
                problems.append("fixtures: bad or duplicate shortCode '\(link.shortCode)' in org '\(org.orgKey)'")
            }
        }
        if rotationGraceSeconds < 0 { problems.append("rotationGraceSeconds must not be negative") }
        if !(deviceIdleSeconds > 0) { problems.append("deviceIdleSeconds must be positive") }
        return problems
    }
}

/// A configuration that cannot be used; `message` names the file and the problem.
public struct StagingConfigurationError: Error, LocalizedError, Sendable, Equatable {
    /// `<source>: <problem>; <problem>…`.
    public var message: String
    public var errorDescription: String? { message }
    /// An error carrying `message` as is.
    public init(message: String) { self.message = message }
}
