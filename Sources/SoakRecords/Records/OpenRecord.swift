/// One `open` step as the recorder counts it.
package struct OpenRecord: Sendable, Equatable {
    /// When `handle(url:)` was called, seconds since the run's start.
    package var start: Double
    /// `handle(url:)` to the emission (or to the end of the wait when nothing came), seconds.
    package var latency: Double
    package var outcome: OpenOutcome
    /// A Universal Link (resolved through `/data`), not a custom-scheme URL.
    package var universal: Bool
    /// Whether the device's SDK ran with the route cache on.
    package var routeCache: Bool

    package init(start: Double, latency: Double, outcome: OpenOutcome, universal: Bool, routeCache: Bool) {
        self.start = start
        self.latency = latency
        self.outcome = outcome
        self.universal = universal
        self.routeCache = routeCache
    }
}

/// The `/data` outage windows a profile declares and the SDK's worst case, to place each open
/// before, during or after an outage (`summary.json` `opens.outage`).
package struct OutagePlan: Sendable, Equatable {
    /// A window in run seconds, `start <= t < end`.
    package struct Window: Sendable, Equatable, Codable {
        package var startSeconds: Double
        package var endSeconds: Double
        package var mode: String

        /// A value with every stored property given (the memberwise initializer, for other targets).
        package init(
            startSeconds: Double,
            endSeconds: Double,
            mode: String
        ) {
            self.startSeconds = startSeconds
            self.endSeconds = endSeconds
            self.mode = mode
        }
    }

    /// Windows that cut `/data`, by start.
    package var windows: [Window]
    /// The longest one SDK call can take before it gives up, seconds: every attempt's timeout plus
    /// every back-off wait of the contract's table (no `Retry-After`: an outage answers no 429).
    package var worstCaseSeconds: Double

    package init(windows: [Window], worstCaseSeconds: Double) {
        self.windows = windows.sorted { $0.startSeconds < $1.startSeconds }
        self.worstCaseSeconds = worstCaseSeconds
    }

    /// The contract's worst case for one call (docs/CONTRACT.md §2, "Retry matrix"): `maxRetries + 1`
    /// attempts of `timeout` seconds each, plus the back-off `min(0.5 · 2ⁿ, 5)` before retry `n`
    /// (`n` = 0 first). Derived here from the table, not from the SDK's code it judges.
    package static func worstCase(timeout: Double, maxRetries: Int) -> Double {
        let retries = Swift.max(0, maxRetries)
        let waits = (0..<retries).reduce(0.0) { sum, n in sum + Swift.min(0.5 * Double(1 << Swift.min(n, 30)), 5) }
        return Double(retries + 1) * timeout + waits
    }

    /// Where an open that started at run second `start` falls.
    package func phase(of start: Double) -> OpenPhase {
        for window in windows
        where start >= window.startSeconds && start + worstCaseSeconds <= window.endSeconds {
            return .during
        }
        guard let first = windows.first, let last = windows.last else { return .before }
        if start + worstCaseSeconds < first.startSeconds { return .before }
        if start >= last.endSeconds { return .after }
        return .edge
    }
}
