import OptoLinkHTTP
import Synchronization

/// Draws, per request, whether a fault applies and which (seeded, so a run replays when
/// requests arrive in the same order).
final class FaultInjector: Sendable {
    private struct State {
        var faults: StagingFaults
        var rules: [StagingEndpoint: [StagingFaultRule]]
        var random: SplitMix64
    }

    private let state: Mutex<State>

    init(_ faults: StagingFaults) { state = Mutex(Self.makeState(faults)) }

    private static func makeState(_ faults: StagingFaults) -> State {
        var rules: [StagingEndpoint: [StagingFaultRule]] = [:]
        for (name, list) in faults.endpoints {
            if let endpoint = StagingEndpoint(rawValue: name), !list.isEmpty { rules[endpoint] = list }
        }
        return State(faults: faults, rules: rules, random: SplitMix64(seed: faults.seed))
    }

    /// Replaces the rules and restarts the draws from the new seed.
    func set(_ faults: StagingFaults) { state.withLock { $0 = Self.makeState(faults) } }

    func current() -> StagingFaults { state.withLock { $0.faults } }

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
