import Foundation
import OptoLinkStaging
import SoakSupport
import SoakVerdicts

/// A soak test profile: who the virtual devices are, what they do, how fast, against
/// which backend configuration, and what the run expects. Decoded strictly from
/// `Profiles/*.json` (unknown fields and out-of-range values are errors naming the field);
/// every field is documented in `Profiles/README.md`.
public struct SoakProfile: Sendable, Equatable {
    /// Short name, used in the default report directory.
    public var name: String
    /// Free text shown at the top of the report.
    public var description: String?
    /// Seeds every random choice (fingerprints, journey picks, IPs), so runs repeat.
    public var seed: UInt64
    package var devices: DevicePopulation
    package var journeys: [Journey]
    package var load: LoadSettings
    package var sdk: SDKSettings
    /// The embedded emulator's configuration (limits, windows, faults), kept verbatim and
    /// decoded into `StagingConfiguration` for embedded runs only.
    package var backend: JSONValue?
    /// The verdicts' inputs: declared limits, tolerances, thresholds (verdicts' own type).
    package var expect: VerdictsConfiguration
    /// The defaults of `optolink-soak capacity` for this profile (its SLO, rates, probe length).
    package var capacity: CapacitySettings?

    /// Loads and validates a profile file.
    /// - Throws: ``SoakProfileError`` naming the file, or the field path and the problem.
    public static func load(contentsOf url: URL) throws -> SoakProfile {
        if let problem = PathProblem.readingFile(url.path, as: "profile") { throw SoakProfileError(message: problem) }
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw SoakProfileError(message: "\(url.path): cannot read profile (\(error.localizedDescription))")
        }
        do {
            return try decode(data)
        } catch let error as SoakProfileError {
            throw SoakProfileError(message: "\(url.lastPathComponent): \(error.message)")
        }
    }

    /// Decodes and validates a profile from JSON bytes.
    /// - Throws: ``SoakProfileError`` `"<field path>: <problem>"`.
    ///   Every problem is found in one pass: the message lists each on its own line, and
    ///   ``SoakProfileError/problems`` holds them one by one.
    public static func decode(_ data: Data) throws -> SoakProfile {
        if let syntax = jsonSyntaxProblem(data) { throw SoakProfileError(message: "not valid JSON: \(syntax)") }
        let issues = ProfileIssues()
        for duplicate in duplicateKeyProblems(in: data) { issues.record(duplicate) }
        let profile: SoakProfile?
        do {
            profile = try ProfileIssues.$current.withValue(issues) {
                try JSONDecoder().decode(SoakProfile.self, from: data)
            }
        } catch is ProfileIssues.Reported {
            profile = nil
        } catch let error as DecodingError {
            if case .dataCorrupted(let context) = error, context.codingPath.isEmpty {
                issues.record(
                    "a number does not fit its field (a fraction where a whole number is expected, or out of range)")
            } else {
                issues.record(error)
            }
            profile = nil
        }
        let problems = issues.all
        guard let profile, problems.isEmpty else { throw SoakProfileError(problems: problems) }
        return profile
    }
}

extension SoakProfile {
    /// Notes for fields that still work under an old name (today `backend.limits.sdk`, now
    /// `backend.limits.session_identity`, the same name as in `expect.limits`); a run prints them.
    package var deprecations: [String] {
        guard let backend, let data = try? JSONEncoder().encode(backend) else { return [] }
        let json = try? JSONSerialization.jsonObject(with: data)
        return StagingLimits.deprecatedKeys(inConfigurationJSON: json, prefix: "backend.")
    }
}

extension SoakProfile: Codable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case name, description, seed, devices, journeys, load, sdk, backend, expect, capacity
    }

    /// Decodes a profile, refusing unknown keys and values out of range.
    /// - Throws: `DecodingError` naming the field path, which ``load(contentsOf:)`` and ``decode(_:)`` turn into ``SoakProfileError``.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        // Each field is checked even when an earlier one failed (ProfileIssues): one pass, every problem.
        name = try c.decodeRequired(String.self, forKey: .name, "must be 1–64 letters, digits, '-' or '_'") {
            !$0.isEmpty && $0.count <= 64 && $0.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }
        }
        description = try c.decodeFieldIfPresent(String.self, forKey: .description)
        seed = try c.decodeFieldIfPresent(UInt64.self, forKey: .seed) ?? 1
        devices = try c.decodeField(DevicePopulation.self, forKey: .devices)
        let issuesBeforeJourneys = ProfileIssues.current?.all.count
        journeys = try c.decodeEach(Journey.self, forKey: .journeys)
        if journeys.isEmpty && ProfileIssues.current?.all.count == issuesBeforeJourneys {
            try c.reportOrThrow(
                DecodingError.dataCorruptedError(
                    forKey: .journeys, in: c, debugDescription: "needs at least one journey"))
        }
        load = try c.decodeField(LoadSettings.self, forKey: .load)
        sdk = try c.decodeFieldIfPresent(SDKSettings.self, forKey: .sdk) ?? SDKSettings()
        backend = try c.decodeFieldIfPresent(JSONValue.self, forKey: .backend)
        // The emulator section is checked at load (strictly: typos are `backend.<path>: unknown field`).
        if let staging = try ProfileIssues.collecting({
            try c.decodeIfPresent(StagingConfiguration.self, forKey: .backend)
        }),
            let staging, !staging.problems().isEmpty
        {
            let problems = staging.problems().joined(separator: "; ")
            try c.reportOrThrow(DecodingError.dataCorruptedError(forKey: .backend, in: c, debugDescription: problems))
        }
        expect = try c.decodeFieldIfPresent(VerdictsConfiguration.self, forKey: .expect) ?? VerdictsConfiguration()
        capacity = try c.decodeFieldIfPresent(CapacitySettings.self, forKey: .capacity)
        // Thresholds are judged after the run; their syntax and metric names are checked now (while a
        // profile is validated, each threshold checks itself at its own path: ThresholdSpec).
        for (index, threshold) in expect.thresholds.enumerated() where ProfileIssues.current == nil {
            guard let problem = Thresholds.problem(in: threshold.expression) else { continue }
            try c.reportOrThrow(
                DecodingError.dataCorrupted(
                    .init(
                        codingPath: decoder.codingPath + [
                            CodingKeys.expect, AnyCodingKey(stringValue: "thresholds"),
                            AnyCodingKey(intValue: index),
                        ],
                        debugDescription: problem)))
        }
        // A `limits.<bucket>.*`, `journey.<name>.*` or `opens.*` threshold must name what the profile
        // declares: the names fit the metric scheme whatever the bucket or journey, so only the
        // profile can tell a typo (both modes).
        let buckets = Set(expect.limits.keys)
        let journeyNames = Set(journeys.map(\.name))
        let withOpen = Set(
            journeys.filter { $0.steps.contains { if case .open = $0 { true } else { false } } }.map(\.name))
        for (index, threshold) in expect.thresholds.enumerated() {
            let expression = threshold.expression
            guard
                let problem = Thresholds.bucketProblem(in: expression, declared: buckets)
                    ?? Thresholds.journeyProblem(in: expression, declared: journeyNames)
                    ?? Thresholds.opensProblem(in: expression, journeysWithOpen: withOpen)
            else { continue }
            try c.reportOrThrow(
                DecodingError.dataCorrupted(
                    .init(
                        codingPath: decoder.codingPath + [
                            CodingKeys.expect, AnyCodingKey(stringValue: "thresholds"),
                            AnyCodingKey(intValue: index),
                        ],
                        debugDescription: problem)))
        }
    }
}

/// The virtual-device population and its fingerprint mix.
package struct DevicePopulation: Sendable, Equatable, Codable {
    /// Number of virtual devices (each its own store, pasteboard and fingerprint).
    package var count: Int
    /// iOS major.minor version → weight.
    package var osVersions: [String: Double]
    /// `iPhone` / `iPad` → weight.
    package var models: [String: Double]
    /// BCP-47 language → weight.
    package var languages: [String: Double]
    /// Share (0…1) of clicking devices whose clipboard survives the App Store hop.
    package var clipboardSurvives: Double
    /// Share (0…1) of devices behind the one shared NAT IP.
    package var sharedNAT: Double
    /// The shared NAT's IP address.
    package var sharedNATAddress: String
    /// Share (0…1) of devices whose SDK runs with the route cache on (`OptoLinkConfig.routeCache`).
    /// Spread evenly and exactly: with 0.5, every second device (`round(count × share)` in all).
    package var routeCache: Double
    /// Local source addresses the devices' requests leave from instead of sending their
    /// simulated IP as `X-Forwarded-For` (``LocalAddressPool`` syntax; `run --local-ips` replaces it).
    package var localIPs: String?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case count, osVersions, models, languages, clipboardSurvives, sharedNAT, sharedNATAddress, routeCache
        case localIPs
    }

    package init(
        count: Int, osVersions: [String: Double] = ["18.1": 1], models: [String: Double] = ["iPhone": 1],
        languages: [String: Double] = ["en-US": 1], clipboardSurvives: Double = 0, sharedNAT: Double = 0,
        sharedNATAddress: String = "198.51.100.1", routeCache: Double = 0
    ) {
        self.routeCache = routeCache
        self.count = count
        self.osVersions = osVersions
        self.models = models
        self.languages = languages
        self.clipboardSurvives = clipboardSurvives
        self.sharedNAT = sharedNAT
        self.sharedNATAddress = sharedNATAddress
    }

    package init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        count = try c.decodeRequired(Int.self, forKey: .count, "must be 1…1000000") { (1...1_000_000).contains($0) }
        let weights = "must be a non-empty object of positive weights"
        let validWeights: ([String: Double]) -> Bool = { !$0.isEmpty && $0.values.allSatisfy { $0 > 0 && $0.isFinite } }
        osVersions = try c.decodeChecked([String: Double].self, forKey: .osVersions, default: ["18.1": 1], weights) {
            validWeights($0)
                && $0.keys.allSatisfy { key in
                    let parts = key.split(separator: ".", omittingEmptySubsequences: false)
                    return parts.count == 2 && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isNumber) }
                }
        }
        models = try c.decodeChecked(
            [String: Double].self, forKey: .models, default: ["iPhone": 1], weights + " with keys iPhone/iPad"
        ) {
            validWeights($0) && $0.keys.allSatisfy { $0 == "iPhone" || $0 == "iPad" }
        }
        languages = try c.decodeChecked([String: Double].self, forKey: .languages, default: ["en-US": 1], weights) {
            validWeights($0)
        }
        clipboardSurvives = try c.decodeChecked(Double.self, forKey: .clipboardSurvives, default: 0, "must be 0…1") {
            (0...1).contains($0)
        }
        sharedNAT = try c.decodeChecked(Double.self, forKey: .sharedNAT, default: 0, "must be 0…1") {
            (0...1).contains($0)
        }
        sharedNATAddress = try c.decodeChecked(
            String.self, forKey: .sharedNATAddress, default: "198.51.100.1", "must be an IPv4 address"
        ) {
            isIPv4($0)
        }
        routeCache = try c.decodeChecked(Double.self, forKey: .routeCache, default: 0, "must be 0…1") {
            (0...1).contains($0)
        }
        localIPs = try c.decodeFieldIfPresent(String.self, forKey: .localIPs)
        if let localIPs {
            do {
                _ = try LocalAddressPool.parse(localIPs, source: "devices.localIPs")
            } catch let error as SoakProfileError {
                self.localIPs = nil
                try c.reportOrThrow(
                    DecodingError.dataCorruptedError(
                        forKey: .localIPs, in: c,
                        debugDescription: String(error.message.dropFirst("devices.localIPs: ".count))))
            }
        }
    }

    /// Whether device `index` (0-based) runs with the route cache: the devices where
    /// `⌊(index + 1) · share + ½⌋` steps up, so exactly `⌊count · share + ½⌋` devices, evenly spread.
    package func routeCacheOn(index: Int) -> Bool {
        let share = Swift.max(0, Swift.min(1, routeCache))
        return (Double(index + 1) * share + 0.5).rounded(.down) > (Double(index) * share + 0.5).rounded(.down)
    }
}

extension DevicePopulation: ProfileStandIn {
    /// What `devices` stands for after its problems were recorded.
    package static var standIn: DevicePopulation { DevicePopulation(count: 1) }
}

func isIPv4(_ text: String) -> Bool {
    let parts = text.split(separator: ".", omittingEmptySubsequences: false)
    return parts.count == 4 && parts.allSatisfy { UInt8($0) != nil }
}

/// A weighted sequence of steps one virtual device performs.
package struct Journey: Sendable, Equatable, Codable {
    package var name: String
    /// Relative weight when a journey is picked at random.
    package var weight: Double
    package var steps: [JourneyStep]

    enum CodingKeys: String, CodingKey, CaseIterable { case name, weight, steps }

    package init(name: String, weight: Double = 1, steps: [JourneyStep]) {
        self.name = name
        self.weight = weight
        self.steps = steps
    }

    package init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decodeRequired(String.self, forKey: .name, "must not be empty") { !$0.isEmpty }
        weight = try c.decodeChecked(Double.self, forKey: .weight, default: 1, "must be > 0") { $0 > 0 && $0.isFinite }
        let issuesBeforeSteps = ProfileIssues.current?.all.count
        steps = try c.decodeEach(JourneyStep.self, forKey: .steps)
        if steps.isEmpty && ProfileIssues.current?.all.count == issuesBeforeSteps {
            try c.reportOrThrow(
                DecodingError.dataCorruptedError(forKey: .steps, in: c, debugDescription: "needs at least one step"))
        }
        var launched = ProfileIssues.current?.all.count != issuesBeforeSteps  // a step failed: no order check
        for (index, step) in steps.enumerated() {
            switch step {
            case .firstLaunch, .relaunch:
                launched = true
            case .open, .event, .identify, .clearIdentity:
                guard !launched else { continue }
                try c.reportOrThrow(
                    DecodingError.dataCorrupted(
                        .init(
                            codingPath: decoder.codingPath + [CodingKeys.steps, AnyCodingKey(intValue: index)],
                            debugDescription: "a \"\(step.kind)\" step needs a firstLaunch or relaunch step before it"
                        )
                    ))
                launched = true  // one such note per journey
            default:
                break
            }
        }
    }
}

/// SDK settings every virtual device's `OptoLinkConfig` gets.
package struct SDKSettings: Sendable, Equatable, Codable {
    /// CLIENT API key (default: the emulator's fixture key).
    package var apiKey: String
    /// Org key (default `acme`).
    package var orgKey: String
    /// Per-attempt timeout in seconds.
    package var timeout: Double
    /// Retries per call after the first attempt.
    package var maxRetries: Int
    /// The app's custom URL scheme for `open` steps with `style: custom`.
    package var customScheme: String
    /// The verified Universal Link host; `null` = the backend's own host.
    package var universalLinkHost: String?
    /// `true` in a report's `profile.json`: `apiKey` there is redacted (``SecretRedaction``), so
    /// the profile cannot be run again as it is; absent in a profile a person writes.
    package var apiKeyRedacted: Bool?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case apiKey, orgKey, timeout, maxRetries, customScheme, universalLinkHost, apiKeyRedacted
    }

    package init(
        apiKey: String = "opl_sdk_test_acme_client", orgKey: String = "acme", timeout: Double = 10,
        maxRetries: Int = 2, customScheme: String = "acme", universalLinkHost: String? = nil
    ) {
        self.apiKey = apiKey
        self.orgKey = orgKey
        self.timeout = timeout
        self.maxRetries = maxRetries
        self.customScheme = customScheme
        self.universalLinkHost = universalLinkHost
    }

    package init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = SDKSettings()
        apiKey = try c.decodeChecked(String.self, forKey: .apiKey, default: defaults.apiKey, "must not be empty") {
            !$0.isEmpty
        }
        orgKey = try c.decodeChecked(String.self, forKey: .orgKey, default: defaults.orgKey, "must not be empty") {
            !$0.isEmpty
        }
        timeout = try c.decodeChecked(Double.self, forKey: .timeout, default: 10, "must be 0.1…600 seconds") {
            (0.1...600).contains($0)
        }
        maxRetries = try c.decodeChecked(Int.self, forKey: .maxRetries, default: 2, "must be 0…10") {
            (0...10).contains($0)
        }
        customScheme = try c.decodeChecked(String.self, forKey: .customScheme, default: "acme", "must be a URL scheme")
        {
            !$0.isEmpty && $0.allSatisfy { $0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == "." }
        }
        universalLinkHost = try c.decodeFieldIfPresent(String.self, forKey: .universalLinkHost)
        apiKeyRedacted = try c.decodeFieldIfPresent(Bool.self, forKey: .apiKeyRedacted)
    }
}
