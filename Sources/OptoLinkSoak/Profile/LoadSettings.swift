import Foundation
import SoakSupport

/// How journeys arrive: the open model (an arrival rate with ramp stages) or the closed
/// model (a fixed number of devices looping). A run always stops by itself: at `duration`
/// seconds, after `iterations` journeys, or at the end of the open model's stages.
package struct LoadSettings: Sendable, Equatable, Codable {
    /// `open` or `closed`.
    package enum Model: String, Sendable, Codable, CaseIterable { case open, closed }

    /// One ramp stage of the open model: over `duration` seconds the arrival rate moves
    /// linearly from the previous stage's `target` (or `startRate`) to this `target` (journeys/s).
    package struct Stage: Sendable, Equatable, Codable {
        package var duration: Double
        package var target: Double

        enum CodingKeys: String, CodingKey, CaseIterable { case duration, target }

        package init(duration: Double, target: Double) {
            self.duration = duration
            self.target = target
        }

        package init(from decoder: any Decoder) throws {
            try decoder.rejectUnknownKeys(CodingKeys.self)
            let c = try decoder.container(keyedBy: CodingKeys.self)
            duration = try c.decodeRequired(Double.self, forKey: .duration, "must be 0.001…604800 seconds") {
                (0.001...604_800).contains($0)
            }
            target = try c.decodeRequired(Double.self, forKey: .target, "must be 0…100000 journeys/s") {
                (0...100_000).contains($0)
            }
        }
    }

    package var model: Model
    /// Open model: the arrival rate (journeys/s) at time 0.
    package var startRate: Double
    /// Open model: ramp stages, in order.
    package var stages: [Stage]
    /// Closed model: concurrent devices looping journeys (default: the population count).
    package var concurrency: Int?
    /// Open model: most journeys in flight at once (one in per one out beyond it).
    package var maxInFlight: Int
    /// Hard bound on the run in seconds (open model default: the stages' total).
    package var duration: Double?
    /// Most journeys started in total (`nil` = unbounded within `duration`).
    package var iterations: Int?
    /// Seconds in-flight work may take to finish after the run stops or is interrupted.
    package var grace: Double

    enum CodingKeys: String, CodingKey, CaseIterable {
        case model, startRate, stages, concurrency, maxInFlight, duration, iterations, grace
    }

    package init(
        model: Model, startRate: Double = 0, stages: [Stage] = [], concurrency: Int? = nil, maxInFlight: Int = 1000,
        duration: Double? = nil, iterations: Int? = nil, grace: Double = 15
    ) {
        self.model = model
        self.startRate = startRate
        self.stages = stages
        self.concurrency = concurrency
        self.maxInFlight = maxInFlight
        self.duration = duration
        self.iterations = iterations
        self.grace = grace
    }

    package init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let modelText = try c.decodeField(String.self, forKey: .model)
        let model = Model(rawValue: modelText) ?? .open
        if Model(rawValue: modelText) == nil, !modelText.isEmpty {
            try c.reportOrThrow(
                DecodingError.dataCorruptedError(
                    forKey: .model, in: c,
                    debugDescription: "unknown load model \"\(modelText)\" (expected one of open, closed)"))
        }
        self.model = model
        startRate = try c.decodeChecked(Double.self, forKey: .startRate, default: 0, "must be 0…100000 journeys/s") {
            (0...100_000).contains($0)
        }
        let issuesBeforeStages = ProfileIssues.current?.all.count
        stages = c.contains(.stages) ? try c.decodeEach(Stage.self, forKey: .stages) : []
        let stagesDecoded = ProfileIssues.current?.all.count == issuesBeforeStages
        concurrency = try c.decodeFieldIfPresent(Int.self, forKey: .concurrency)
        if let concurrency, !(1...1_000_000).contains(concurrency) {
            try c.reportOrThrow(
                DecodingError.dataCorruptedError(forKey: .concurrency, in: c, debugDescription: "must be 1…1000000"))
        }
        maxInFlight = try c.decodeChecked(Int.self, forKey: .maxInFlight, default: 1000, "must be 1…1000000") {
            (1...1_000_000).contains($0)
        }
        duration = try c.decodeFieldIfPresent(Double.self, forKey: .duration)
        if let duration, !(0.001...604_800).contains(duration) {
            try c.reportOrThrow(
                DecodingError.dataCorruptedError(
                    forKey: .duration, in: c, debugDescription: "must be 0.001…604800 seconds"))
        }
        iterations = try c.decodeFieldIfPresent(Int.self, forKey: .iterations)
        if let iterations, iterations < 1 {
            try c.reportOrThrow(
                DecodingError.dataCorruptedError(forKey: .iterations, in: c, debugDescription: "must be ≥ 1"))
        }
        grace = try c.decodeChecked(Double.self, forKey: .grace, default: 15, "must be 0…600 seconds") {
            (0...600).contains($0)
        }
        // Checks across fields, unless a field they read already failed (its stand-in would mislead).
        if model == .open && stages.isEmpty && stagesDecoded {
            try c.reportOrThrow(
                DecodingError.dataCorruptedError(
                    forKey: .stages, in: c, debugDescription: "the open model needs at least one stage"))
        }
        if model == .closed && duration == nil && iterations == nil {
            try c.reportOrThrow(
                DecodingError.dataCorruptedError(
                    forKey: .duration, in: c,
                    debugDescription: "the closed model needs duration or iterations (a run must stop)"))
        }
    }

    /// The effective hard bound in seconds: `duration`, else the open model's stage total.
    package var effectiveDuration: Double {
        if let duration { return duration }
        return stages.reduce(0) { $0 + $1.duration }
    }
}

extension LoadSettings: ProfileStandIn {
    /// What `load` stands for after its problems were recorded (validation goes on with the other sections).
    package static var standIn: LoadSettings { LoadSettings(model: .open, stages: [Stage(duration: 1, target: 0)]) }
}
