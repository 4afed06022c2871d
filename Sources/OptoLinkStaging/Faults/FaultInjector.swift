import OptoLinkHTTP
import Synchronization
import SoakSupport

/// Draws, per request, whether a fault applies and which (seeded, so a run replays when
/// requests arrive in the same order).
final class FaultInjector: Sendable {
    private struct State {
        var faults: StagingFaults
        var rules: [StagingEndpoint: [StagingFaultRule]]
        var random: SplitMix64
        /// Epoch seconds that outage windows count from.
        var origin: Double
    }

    private let state: Mutex<State>

    /// Rules in force from `origin` (epoch seconds: outage windows count from it).
    init(_ faults: StagingFaults, origin: Double) { state = Mutex(Self.makeState(faults, origin: origin)) }

    private static func makeState(_ faults: StagingFaults, origin: Double) -> State {
        var rules: [StagingEndpoint: [StagingFaultRule]] = [:]
        for (name, list) in faults.endpoints {
            if let endpoint = StagingEndpoint(rawValue: name), !list.isEmpty { rules[endpoint] = list }
        }
        return State(faults: faults, rules: rules, random: SplitMix64(seed: faults.seed), origin: origin)
    }

    /// Replaces the rules, restarts the draws from the new seed and counts outage windows from `origin`.
    func set(_ faults: StagingFaults, origin: Double) { state.withLock { $0 = Self.makeState(faults, origin: origin) } }

    /// Counts outage windows from `origin` (epoch seconds) without touching the rules or draws.
    func setOrigin(_ origin: Double) { state.withLock { $0.origin = origin } }

    func current() -> StagingFaults { state.withLock { $0.faults } }

    /// The epoch seconds outage windows count from.
    func origin() -> Double { state.withLock { $0.origin } }

    /// The first outage covering a request to `endpoint` at epoch second `now`, or `nil`.
    func outage(_ endpoint: StagingEndpoint, at now: Double) -> StagingOutage? {
        state.withLock { state in
            guard !state.faults.outages.isEmpty else { return nil }
            let elapsed = now - state.origin
            return state.faults.outages.first { $0.covers(endpoint, at: elapsed) }
        }
    }

    /// The fault for one request to `endpoint`, or `nil`. Endpoints without rules draw nothing.
    func draw(_ endpoint: StagingEndpoint) -> StagingFaultRule? {
        state.withLock { state in
            guard let rules = state.rules[endpoint] else { return nil }
            let r = state.random.unit()
            var cumulative = 0.0
            for rule in rules {
                cumulative += rule.rate
                if r < cumulative { return rule }
            }
            return nil
        }
    }
}
