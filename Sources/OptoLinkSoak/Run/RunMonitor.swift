import OptoLink
import Synchronization
import SoakRecords
import SoakVerdicts

/// Watches a run while it goes and stops it early when going on is pointless:
///
/// - **Misconfiguration**: an endpoint whose every response so far is a 401, 403 or 404 (a wrong
///   or revoked key, a SERVER-tier key on `/sdk/*`, a wrong base path: see ``refusals(for:)``) — once it has
///   ``minimumResponses`` of them, or at least 3 after ``window`` seconds — stops the run with
///   stop reason `misconfigured` and exit 2; the message names each status and endpoint.
///   Endpoints are judged one by one because `/match` needs no key: a revoked key still gets
///   201 there. An endpoint's first other answer clears it for good, and the check ends
///   ``lastCheck`` seconds into the run (the first seconds tell; later refusals are the
///   thresholds' business, `http.failed`).
/// - **`abortOnFail` thresholds** (k6): checked on the live client-side metrics after their
///   `delayAbortEval`; the first failure stops the run (`threshold_aborted`, exit 1).
package final class RunMonitor: Sendable {
    /// Responses that make the misconfiguration check decide before ``window`` elapses.
    let minimumResponses: Int
    /// Seconds after which any responses, all refused, are enough to decide.
    let window: Double
    let thresholds: [ThresholdSpec]
    private let state = Mutex(State())

    private struct State {
        var armed = true
        var reason: StopReason?
        /// Endpoints that got an answer other than a refusal.
        var cleared = Set<ContractEndpoint>()
        var message: String?
    }

    /// Seconds into the run after which the misconfiguration check stops.
    let lastCheck: Double

    package init(thresholds: [ThresholdSpec], minimumResponses: Int = 10, window: Double = 2, lastCheck: Double = 10) {
        self.thresholds = thresholds.filter(\.abortOnFail)
        self.minimumResponses = minimumResponses
        self.window = window
        self.lastCheck = lastCheck
    }

    /// Why the monitor stopped the run, in words; `nil` when it did not.
    var message: String? { state.withLock { $0.message } }

    /// The stop reason the monitor gave, if it stopped the run (it outranks `deadline`: work
    /// cut at the grace cutoff after the monitor's stop is still the monitor's doing).
    var stopReason: StopReason? { state.withLock { $0.reason } }

    /// The statuses a misconfigured backend answers `endpoint` with. `/match` needs no key
    /// and never answers 404 by contract, so a 404 there means a wrong path; `/sdk/*` may
    /// answer 404 legitimately (a device whose session check-in failed), so only 401/403 count;
    /// `/data` answers 404 for an unknown link, so it is not judged.
    static func refusals(for endpoint: ContractEndpoint) -> Set<Int> {
        switch endpoint {
        case .match: [401, 403, 404]
        case .data: []
        case .session, .identity, .identityClear, .events: [401, 403]
        }
    }

    /// One check at run time `now` (seconds); returns the stop reason when the run must stop.
    func check(now: Double, recorder: SoakRecorder) -> StopReason? {
        if state.withLock({ $0.armed }), let message = misconfiguration(now: now, statuses: recorder.statusCounts()) {
            state.withLock {
                $0.message = message
                $0.reason = .misconfigured
            }
            return .misconfigured
        }
        let due = thresholds.filter { now >= $0.delayAbortEvalSeconds }
        guard !due.isEmpty else { return nil }
        let metrics = recorder.liveMetrics(activeSeconds: now)
        for spec in due {
            let result = Thresholds.evaluate([spec.expression], metrics: metrics)[0]
            // Verdict metrics exist only at the end: a metric missing now is not a failure yet.
            guard result.observed != nil, !result.passed else { continue }
            let message =
                "threshold \"\(spec.expression)\" (abortOnFail) failed at "
                + String(format: "%.1f s", now)
                + ": observed \(Thresholds.display(result.observed ?? 0, like: spec.expression))"
            state.withLock {
                $0.message = message
                $0.reason = .thresholdAborted
            }
            return .thresholdAborted
        }
        return nil
    }

    /// The misconfiguration message when some endpoint's every response so far is a refusal
    /// and there are enough of them; `nil` otherwise.
    package func misconfiguration(now: Double, statuses: [ContractEndpoint: [String: Int]]) -> String? {
        guard now <= lastCheck else {
            state.withLock { $0.armed = false }
            return nil
        }
        var refusedEndpoints: [(endpoint: ContractEndpoint, parts: [(status: Int, count: Int)], total: Int)] = []
        for (endpoint, counts) in statuses where !state.withLock({ $0.cleared.contains(endpoint) }) {
            let refusals = Self.refusals(for: endpoint)
            var parts: [(status: Int, count: Int)] = []
            var accepted = false
            for (key, count) in counts {
                guard let status = Int(key) else { continue }
                if refusals.contains(status) { parts.append((status, count)) } else { accepted = true }
            }
            if accepted {
                state.withLock { _ = $0.cleared.insert(endpoint) }
                continue
            }
            let total = parts.reduce(0) { $0 + $1.count }
            if total >= minimumResponses || (now >= window && total >= 3) {
                refusedEndpoints.append((endpoint, parts.sorted { $0.count > $1.count }, total))
            }
        }
        guard !refusedEndpoints.isEmpty else { return nil }
        state.withLock { $0.armed = false }
        refusedEndpoints.sort { ($0.total, $1.endpoint.rawValue) > ($1.total, $0.endpoint.rawValue) }
        let described = refusedEndpoints.map { entry in
            "\(entry.endpoint.rawValue) got only "
                + entry.parts.map { "\($0.status)×\($0.count)" }.joined(separator: " ")
        }
        let statusesSeen = Set(refusedEndpoints.flatMap { $0.parts.map(\.status) })
        var hints: [String] = []
        if statusesSeen.contains(401) {
            hints.append(
                "401: the API key is wrong, revoked or missing (check the key given by --api-key, --api-key-file, "
                    + "OPTOLINK_API_KEY or the profile's sdk.apiKey)")
        }
        if statusesSeen.contains(403) { hints.append("403: the key's tier is not CLIENT (a SERVER key on /sdk/*)") }
        if statusesSeen.contains(404) { hints.append("404: a wrong --base-url path or --org-key") }
        return "stopped early, the backend refuses this run: in the first " + String(format: "%.1f s", now) + " "
            + described.joined(separator: "; ") + " (" + hints.joined(separator: "; ") + ")"
    }
}

extension SoakRecorder {
    /// The client-side metrics so far (what ``SummaryMetrics`` names), for live threshold checks.
    func liveMetrics(activeSeconds: Double) -> [String: Double] {
        let parts = summaryParts(activeSeconds: activeSeconds)
        return SummaryMetrics.build(
            totals: parts.totals, endpoints: parts.endpoints, journeys: parts.journeys, deferred: parts.deferred,
            clicks: parts.clicks, opens: parts.opens, rss: [])
    }
}
