/// The open model's intended journey start times (seconds since run start).
///
/// The arrival rate r(t) is piecewise linear: it starts at `startRate` and each stage moves
/// it linearly to the stage's target over the stage's duration; after the last stage the
/// last target holds until `duration`. Arrival k (from 0) is scheduled where the cumulative
/// arrivals ∫r reach k + ½, so a constant rate R over D seconds yields exactly R·D starts,
/// evenly spaced. The schedule ignores how the run is going: it is the plan against which
/// lateness is measured (coordinated omission cannot hide a stall).
package struct ArrivalSchedule: Sequence, IteratorProtocol, Sendable {
    private let segments: [(start: Double, duration: Double, from: Double, to: Double)]
    private let end: Double
    private var index = 0
    private var segment = 0
    /// Cumulative arrivals at the start of `segment`.
    private var cumulativeAtSegment = 0.0

    /// - Parameters:
    ///   - startRate: journeys/s at time 0.
    ///   - stages: ramp stages (duration seconds, target journeys/s).
    ///   - duration: the schedule's end in seconds (default: the stages' total).
    package init(startRate: Double, stages: [LoadSettings.Stage], duration: Double? = nil) {
        var segments: [(Double, Double, Double, Double)] = []
        var t = 0.0
        var rate = startRate
        for stage in stages {
            segments.append((t, stage.duration, rate, stage.target))
            t += stage.duration
            rate = stage.target
        }
        let end = duration ?? t
        if end > t { segments.append((t, end - t, rate, rate)) }
        self.segments = segments
        self.end = end
    }

    /// The next intended start, or `nil` when the schedule is over.
    package mutating func next() -> Double? {
        let goal = Double(index) + 0.5
        while segment < segments.count {
            let s = segments[segment]
            let slope = (s.to - s.from) / s.duration
            let inSegment = s.from * s.duration + slope * s.duration * s.duration / 2
            if cumulativeAtSegment + inSegment >= goal {
                let need = goal - cumulativeAtSegment
                let tau: Double
                if abs(slope) < 1e-12 {
                    tau = need / s.from
                } else {
                    // slope/2 · τ² + from · τ − need = 0
                    let disc = s.from * s.from + 2 * slope * need
                    tau = (-s.from + (disc > 0 ? disc.squareRoot() : 0)) / slope
                }
                let t = s.start + Swift.min(Swift.max(tau, 0), s.duration)
                guard t < end else { return nil }
                index += 1
                return t
            }
            cumulativeAtSegment += inSegment
            segment += 1
        }
        return nil
    }
}
