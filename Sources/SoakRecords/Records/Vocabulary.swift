// The closed vocabularies the recorder writes, the verdicts judge and the reports print.
// Each raw value is the spelling in `attempts.csv`, `calls.csv`, `summary.json` and metric
// names (`Reports/README.md`); the threshold metric catalogue is built from these cases, so
// a new case is a valid metric name the moment it exists.

/// How one public SDK call ended (`calls.csv` column `outcome`, metric `<endpoint>.calls.<outcome>`).
package enum CallOutcome: String, Sendable, Codable, CaseIterable, Comparable {
    /// The call succeeded (2xx).
    case ok
    /// The backend answered with a status the call throws on (4xx, 5xx, or a 429 left after the budget).
    case apiError = "api_error"
    /// No response: connection error or timeout, after the retry budget.
    case connectionError = "connection_error"
    /// The public call threw something that is neither an API nor a connection error.
    case otherError = "other_error"
    /// The run cancelled the call itself (the grace deadline, Ctrl-C), e.g. during a back-off
    /// sleep or with an attempt in flight. Never the backend's error: the client was stopped.
    case cancelledByRun = "cancelled_by_run"
    /// The run ended with an attempt of the call still in flight and nobody closed it.
    case unfinished

    /// Parses a `calls.csv` value; `cancelled`, how reports of earlier builds spell it, is ``cancelledByRun``.
    package init?(csv text: String) {
        if text == "cancelled" {
            self = .cancelledByRun
        } else {
            self.init(rawValue: text)
        }
    }

    /// Whether the client saw the call succeed.
    package var isSuccess: Bool { self == .ok }

    /// Whether the call ended by itself, so its time is a latency: a call the run cut
    /// (cancelled, unfinished) is counted by its outcome and kept out of every latency.
    package var isFinished: Bool { self != .cancelledByRun && self != .unfinished }

    package static func < (lhs: CallOutcome, rhs: CallOutcome) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Why an HTTP attempt got no response (`attempts.csv` column `error_kind`): short and
/// value-free, so it can label a metric or a report row.
package enum AttemptErrorKind: String, Sendable, Codable, CaseIterable, Comparable {
    /// The attempt outlived its per-attempt timeout (docs/CONTRACT.md §2: 10 s by default).
    case timedOut = "timed_out"
    /// The connection dropped mid-exchange.
    case connectionLost = "connection_lost"
    /// No connection could be made (refused, unknown host).
    case cannotConnect = "cannot_connect"
    /// The TLS handshake failed: certificate not trusted, expired or for another name, or a
    /// protocol failure (the reason is in the run's messages and the pre-flight probe's error).
    case tlsFailed = "tls_failed"
    /// The bytes that came back were not an HTTP response.
    case badResponse = "bad_response"
    /// Cancelled before its timeout by the SDK (e.g. an instance disposed on relaunch).
    case cancelled
    /// Cancelled by the run itself (grace deadline, Ctrl-C): never the backend's error.
    case cancelledByRun = "cancelled_by_run"
    /// Any other transport error.
    case other

    package static func < (lhs: AttemptErrorKind, rhs: AttemptErrorKind) -> Bool { lhs.rawValue < rhs.rawValue }

    /// Whether the client side, not the network or the backend, ended the attempt.
    package var isCancellation: Bool { self == .cancelled || self == .cancelledByRun }
}

/// Why a run stopped (`summary.json` `run.stopReason`, the report's `stop:` field).
public enum StopReason: String, Sendable, Codable, CaseIterable {
    /// The arrival schedule ran out (open model) or every worker finished (closed model).
    case completed
    /// `load.duration` elapsed.
    case duration
    /// `load.iterations` journeys were started.
    case iterations
    /// SIGINT (Ctrl-C); exit 130.
    case interrupted
    /// SIGTERM; exit 143.
    case terminated
    /// In-flight work outlived `load.grace` after the stop and was cancelled.
    case deadline
    /// The first seconds of the run were all refused with 401/403/404: a wrong key, key tier or
    /// base path. Exit 2.
    case misconfigured
    /// A threshold marked `abortOnFail` failed during the run. Exit 1.
    case thresholdAborted = "threshold_aborted"

    /// Whether a signal stopped the run (the report is still written).
    package var isSignal: Bool { self == .interrupted || self == .terminated }
}

/// What the limit oracle found wrong with one judged hit (`summary.json` `limits.*.examples[].kind`,
/// metric `limits.<bucket>.<finding>`).
package enum LimitFinding: String, Sendable, Codable, CaseIterable {
    /// A hit passed beyond the declared limit of its window.
    case tooLenient = "too_lenient"
    /// A 429 arrived while fewer than `limit` hits could have been counted in its window.
    case tooStrict = "too_strict"
    /// A 429 whose body carried no parseable `Retry after N second(s)`.
    case wrongMessage = "wrong_message"
    /// A 429 whose `N` is outside the seconds left in its window.
    case wrongN = "wrong_n"
}

/// How one client write compares with the server's ledger (reconciliation, one per call).
package enum ReconcileOutcome: String, Sendable, Codable, CaseIterable {
    /// The client saw success and the server stored it exactly once.
    case deliveredOnce = "delivered_once"
    /// The server stored the write more than once.
    case duplicated
    /// The client saw success and the server stored nothing.
    case lost
    /// The client saw a failure and the server stored the write once anyway.
    case landedUnknown = "landed_unknown"
    /// The client saw a failure and the server stored nothing (consistent).
    case notDelivered = "not_delivered"
    /// The client saw success, no row is in the ledger, and the call ended after the ledger's
    /// last row while the ledger had not caught up with the run: its row may still be written.
    case notCovered = "not_covered"
}

/// How one judged retry's wait compares with the contract's back-off.
package enum BackoffJudgement: String, Sendable, Codable, CaseIterable {
    /// Shorter than the expected wait: a violation.
    case early
    /// Within the profile's tolerance of the expected wait.
    case onTime = "on_time"
    /// Longer than the tolerance allows.
    case late
}

/// What a retry waited for: a 429's `N`, or the exponential table.
package enum BackoffCause: String, Sendable, Codable, CaseIterable {
    /// After a 429 whose body gave `N` seconds.
    case rateLimited = "rate_limited"
    /// After a connection error, a timeout, a 5xx, or a 429 without `N`.
    case exponential
}

/// Where an `open` step's tap landed (`summary.json` `opens.byOutcome`, metrics `opens.<outcome>`
/// and `opens.outage.<outcome>`).
package enum OpenOutcome: String, Sendable, Codable, CaseIterable, Comparable {
    /// `/data` answered: a fresh route (`OptoLinkData.source == .resolved`).
    case resolved
    /// `/data` failed and the SDK's route cache served an earlier answer (`.cached`).
    case cached
    /// The raw link: a custom scheme, or a Universal Link whose resolution failed with nothing cached (`.raw`).
    case raw
    /// Nothing reached `links` within the step's `timeout`.
    case timedOut = "timed_out"
    /// The run's end (grace deadline, Ctrl-C) cut the wait before a link came.
    case cancelledByRun = "cancelled_by_run"

    /// Whether the app got no link at all: the tap is lost.
    package var isLost: Bool { self == .timedOut || self == .cancelledByRun }

    /// Whether the link came from a fallback layer (cache or raw) rather than a fresh resolution.
    package var isFallback: Bool { self == .cached || self == .raw }

    package static func < (lhs: OpenOutcome, rhs: OpenOutcome) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Where an `open` step's start falls relative to the profile's `/data` outage windows
/// (`summary.json` `opens.outage.phases`).
package enum OpenPhase: String, Sendable, Codable, CaseIterable, Comparable {
    /// Its whole worst case (every attempt and wait) ends before the first window opens: must resolve.
    case before
    /// It starts inside a window and its worst case ends inside it: every attempt meets the outage.
    case during
    /// It starts after the last window closed: must resolve.
    case after
    /// Its attempts may straddle a window's start or end: either answer is right.
    case edge

    package static func < (lhs: OpenPhase, rhs: OpenPhase) -> Bool { lhs.rawValue < rhs.rawValue }
}
