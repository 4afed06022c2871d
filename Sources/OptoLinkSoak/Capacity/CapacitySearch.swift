/// The search of `optolink-soak capacity`: a pure state machine that turns probe outcomes into the
/// next probe rate or a final answer. It never runs anything; ``CapacityCommand`` performs each
/// probe it asks for and feeds the outcome back, and the tests drive it with synthetic backends.
///
/// The search, in arrival rates (journeys/s):
/// 1. **Bracket**: probe `minRate`, then double (capped at `maxRate`) while probes pass.
///    A pass at `maxRate` ends the search: the backend sustained the highest rate asked for.
///    A failure at `minRate` ends it too: the SLO does not hold even there.
/// 2. **Recovery**: after the first failing probe, one probe at the last passing rate must pass
///    again; if it fails, the backend did not recover from the overload and the search ends.
/// 3. **Bisect** the bracket [last pass, lowest fail] until `high ≤ low × (1 + tolerance)`.
///
/// Every probe, the recovery probe included, counts against `maxProbes`; the search ends with
/// the bracket it has when the budget runs out. An `invalid` probe (the generator saturated)
/// ends the search at once: its rate says where the generator, not the backend, gave out.
package struct CapacitySearch: Sendable {
    /// The search's bounds.
    package struct Settings: Sendable, Equatable {
        /// The first probe's rate (journeys/s, > 0).
        package var minRate: Double
        /// The highest rate probed (journeys/s, ≥ `minRate`).
        package var maxRate: Double
        /// The bracket's relative width at which the search stops (0.05 = 5 %).
        package var tolerance: Double
        /// Most probes in all, the recovery probe included (≥ 1).
        package var maxProbes: Int

        package init(minRate: Double, maxRate: Double, tolerance: Double = 0.05, maxProbes: Int = 8) {
            self.minRate = minRate
            self.maxRate = maxRate
            self.tolerance = tolerance
            self.maxProbes = maxProbes
        }

        /// Why these settings cannot drive a search, or `nil`.
        package var problem: String? {
            if !(minRate > 0) || !minRate.isFinite { return "the minimum rate must be > 0 journeys/s" }
            if !(maxRate >= minRate) || !maxRate.isFinite {
                return "the maximum rate (\(maxRate)) must be at least the minimum rate (\(minRate))"
            }
            if !(tolerance > 0 && tolerance < 1) { return "the tolerance must be between 0 and 100 % (e.g. 5%)" }
            if maxProbes < 1 { return "the probe budget must be at least 1" }
            return nil
        }
    }

    /// What one probe showed.
    package enum Outcome: Sendable, Equatable {
        /// Every SLO term held.
        case pass
        /// The SLO broke; `clause` names the first term that failed (e.g. `http.failed.rate < 0.01`).
        case fail(clause: String)
        /// The generator saturated, so the probe says nothing about the backend; `reason` says how.
        case invalid(reason: String)
    }

    /// Why a probe is run.
    package enum Purpose: String, Sendable, Equatable, Codable {
        case bracket, recovery, bisect
    }

    /// What to do next.
    package enum Step: Sendable, Equatable {
        /// Hold `rate` journeys/s for one probe, then ``record(_:)`` its outcome.
        case probe(rate: Double, purpose: Purpose)
        /// The search is over.
        case done(Answer)
    }

    /// How the search ended.
    package enum Ending: String, Sendable, Equatable, Codable {
        /// The bracket narrowed to within the tolerance: `knee` is its passing edge.
        case knee
        /// The highest rate asked for passed: the knee is at or above it.
        case sustainedMax
        /// The SLO failed at the minimum rate.
        case failedAtMinimum
        /// A probe back at the last passing rate failed after the first overload.
        case notRecovered
        /// The generator saturated before the backend: the probes say nothing above `generatorLimit`.
        case generatorLimit
        /// The probe budget ran out before the bracket was within the tolerance.
        case budgetExhausted
    }

    /// The search's answer.
    package struct Answer: Sendable, Equatable {
        package var ending: Ending
        /// The highest rate that passed (journeys/s), `nil` when none did.
        package var knee: Double?
        /// The rates the knee lies between: the highest pass and the lowest fail (either may be absent).
        package var low: Double?
        package var high: Double?
        /// The SLO term that failed at `high`, the lowest failing rate: the term that breaks first.
        package var limitedBy: String?
        /// The rate at which the generator saturated (``Ending/generatorLimit``), and how.
        package var generatorLimit: Double?
        package var generatorReason: String?
        /// Probes run.
        package var probes: Int

        package init(
            ending: Ending, knee: Double?, low: Double?, high: Double?, limitedBy: String?, probes: Int,
            generatorLimit: Double? = nil, generatorReason: String? = nil
        ) {
            self.ending = ending
            self.knee = knee
            self.low = low
            self.high = high
            self.limitedBy = limitedBy
            self.generatorLimit = generatorLimit
            self.generatorReason = generatorReason
            self.probes = probes
        }
    }

    package let settings: Settings
    /// The probe asked for and not yet recorded.
    package private(set) var pending: (rate: Double, purpose: Purpose)?
    /// Highest passing rate, lowest failing rate and the term that failed there.
    private var low: Double?
    private var high: Double?
    private var limitedBy: String?
    private var recoveryChecked = false
    /// Probes whose outcome was recorded.
    package private(set) var probes = 0

    package init(_ settings: Settings) { self.settings = settings }

    /// The first probe: `minRate`.
    package mutating func start() -> Step { ask(settings.minRate, .bracket) }

    /// Records the outcome of the pending probe and returns the next step.
    /// - Precondition: a probe is pending (``start()`` or a previous ``record(_:)`` asked for one).
    package mutating func record(_ outcome: Outcome) -> Step {
        guard let (rate, purpose) = pending else { preconditionFailure("CapacitySearch: no probe is pending") }
        pending = nil
        probes += 1
        switch outcome {
        case .invalid(let reason):
            var answer = answer(.generatorLimit)
            answer.generatorLimit = rate
            answer.generatorReason = reason
            return .done(answer)
        case .fail(let clause) where purpose == .recovery:
            var answer = answer(.notRecovered)
            answer.limitedBy = limitedBy ?? clause
            return .done(answer)
        case .pass where purpose == .recovery:
            recoveryChecked = true
        case .pass:
            low = Swift.max(low ?? rate, rate)
        case .fail(let clause):
            if high.map({ rate < $0 }) ?? true {
                high = rate
                limitedBy = clause
            }
        }
        return next()
    }

    private mutating func next() -> Step {
        guard let low else { return .done(answer(.failedAtMinimum)) }
        guard let high else {
            if low >= settings.maxRate { return .done(answer(.sustainedMax)) }
            return ask(Swift.min(low * 2, settings.maxRate), .bracket)
        }
        if !recoveryChecked { return ask(low, .recovery) }
        if high <= low * (1 + settings.tolerance) { return .done(answer(.knee)) }
        return ask((low + high) / 2, .bisect)
    }

    private mutating func ask(_ rate: Double, _ purpose: Purpose) -> Step {
        guard probes < settings.maxProbes else { return .done(answer(.budgetExhausted)) }
        pending = (rate, purpose)
        return .probe(rate: rate, purpose: purpose)
    }

    private func answer(_ ending: Ending) -> Answer {
        Answer(
            ending: ending, knee: ending == .failedAtMinimum ? nil : low, low: low, high: high, limitedBy: limitedBy,
            probes: probes)
    }
}
