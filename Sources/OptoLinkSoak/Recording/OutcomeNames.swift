/// The spellings of call outcomes and attempt error kinds shared by the runner and the
/// recorder (`calls.csv` column `outcome`, `attempts.csv` column `error_kind`).
enum CallOutcomeName {
    static let ok = "ok"
    static let apiError = "api_error"
    static let connectionError = "connection_error"
    static let otherError = "other_error"
    /// The run cancelled the call (grace deadline, Ctrl-C, a disposed instance): never the backend's error.
    static let cancelledByRun = "cancelled"
    /// An attempt of the call was still in flight when the report was written.
    static let unfinished = "unfinished"

    /// Whether a call with `outcome` ended by itself (so its time is a latency).
    static func finished(_ outcome: String) -> Bool { outcome != cancelledByRun && outcome != unfinished }
}

enum AttemptErrorKindName {
    /// The client side ended the attempt before its timeout (the run's deadline, a disposed instance).
    static let cancelled = "cancelled"
}
