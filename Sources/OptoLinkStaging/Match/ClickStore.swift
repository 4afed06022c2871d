import Synchronization

/// Recorded clicks, indexed by token and by client IP, and the match ladder over them.
final class ClickStore: Sendable {
    private struct State {
        var settings: StagingMatchSettings
        var byToken: [String: Click] = [:]
        /// Tokens per IP in click order (may hold consumed or expired tokens until swept).
        var byIP: [String: [String]] = [:]
        var insertsSinceSweep = 0
        var lastSweep = -Double.infinity
    }

    private let state: Mutex<State>

    init(settings: StagingMatchSettings) { state = Mutex(State(settings: settings)) }

    func record(_ click: Click) {
        state.withLock { state in
            state.byToken[click.token] = click
            state.byIP[click.ip, default: []].append(click.token)
            state.insertsSinceSweep += 1
            // Clicks expire at their TTL: swept every 4,096 clicks and at least once per TTL/4 of clock time.
            let ttl = state.settings.clickTTLSeconds
            if state.insertsSinceSweep >= 4096 || click.clickedAt - state.lastSweep >= max(1, ttl / 4) {
                state.insertsSinceSweep = 0
                state.lastSweep = click.clickedAt
                Self.sweep(&state, now: click.clickedAt)
            }
        }
    }

    var count: Int { state.withLock { $0.byToken.count } }

    /// Drops every click older than its TTL at `now` (epoch seconds).
    func sweep(now: Double) {
        state.withLock { state in
            state.lastSweep = now
            Self.sweep(&state, now: now)
        }
    }

    func reset() {
        state.withLock {
            $0.byToken.removeAll()
            $0.byIP.removeAll()
        }
    }

    /// Runs the ladder (clipboard → exact → scored → IP fuzzy) and, when `consume` is set,
    /// removes the matched click. `nil` is a miss.
    func match(_ query: MatchQuery, now: Double, consume: Bool) -> MatchHit? {
        state.withLock { state in
            guard let hit = Self.ladder(query, now: now, state: &state) else { return nil }
            if consume {
                state.byToken.removeValue(forKey: hit.click.token)
                state.byIP[hit.click.ip]?.removeAll { $0 == hit.click.token }
                if state.byIP[hit.click.ip]?.isEmpty == true { state.byIP.removeValue(forKey: hit.click.ip) }
            }
            return hit
        }
    }

    private static func ladder(_ query: MatchQuery, now: Double, state: inout State) -> MatchHit? {
        let s = state.settings
        func live(_ click: Click) -> Bool { now - click.clickedAt <= s.clickTTLSeconds }

        if let token = query.normalizedToken, let click = state.byToken[token], live(click) {
            return MatchHit(click: click, method: .clipboard, score: nil)
        }
        // Newest first: the latest click from this IP is the likeliest.
        let sameIP = (state.byIP[query.ip] ?? []).reversed().compactMap { state.byToken[$0] }.filter(live)
        let fingerprint = query.fingerprint
        if let click = sameIP.first(where: { $0.fingerprint == fingerprint }) {
            return MatchHit(click: click, method: .fingerprintExact, score: nil)
        }
        let withoutIP = s.platformWeight + s.osVersionWeight + s.languageWeight + s.timezoneWeight
        let candidates = withoutIP >= s.scoredThreshold ? state.byToken.values.filter(live) : sameIP
        var best: (Click, Int)?
        for click in candidates {
            let score = query.score(click, s)
            guard score >= s.scoredThreshold else { continue }
            if let (kept, keptScore) = best,
                keptScore > score || (keptScore == score && kept.clickedAt >= click.clickedAt)
            {
                continue
            }
            best = (click, score)
        }
        if let (click, score) = best { return MatchHit(click: click, method: .fingerprintScored, score: score) }
        if let click = sameIP.first(where: { now - $0.clickedAt <= s.ipFuzzyWindowSeconds }) {
            return MatchHit(click: click, method: .ipFuzzy, score: nil)
        }
        return nil
    }

    private static func sweep(_ state: inout State, now: Double) {
        let ttl = state.settings.clickTTLSeconds
        state.byToken = state.byToken.filter { now - $0.value.clickedAt <= ttl }
        var byIP: [String: [String]] = [:]
        for (ip, tokens) in state.byIP {
            let kept = tokens.filter { state.byToken[$0] != nil }
            if !kept.isEmpty { byIP[ip] = kept }
        }
        state.byIP = byIP
    }
}
