import SoakRecords

/// Everything the verdicts judge when a run's records are held in memory: the recorder's rows,
/// the server's ledger (when one is available), the attribution outcomes and the profile's
/// `expect` section. ``Verdicts/evaluate(_:)`` turns it into a time-ordered stream.
package struct VerdictInputs: Sendable {
    /// Every HTTP attempt (one row of `attempts.csv` each); times in seconds since run start.
    package var attempts: [AttemptRecord]
    /// Every public SDK call (one row of `calls.csv` each).
    package var calls: [CallRecord]
    /// The server's ledger of accepted writes, or `nil` when none is available (a real
    /// backend without `--ledger FILE`): reconciliation then reports "not available".
    package var ledger: [LedgerRow]?
    package var attribution: [AttributionRecord]
    package var configuration: VerdictsConfiguration
    /// The SDK's `maxRetries` for the run (docs/CONTRACT.md §2: default 2, so at most 3 attempts).
    package var maxRetries: Int
    /// The run's start as seconds since the Unix epoch (ledger `arrivedAt` minus this is run time).
    package var runStartEpoch: Double
    /// Virtual device → the SDK's persisted `deviceId` of its latest install.
    package var deviceIds: [String: String]
    /// The SDK `deviceId` each launch used (a reinstall changes it).
    package var launchDeviceIds: [DeviceLaunch: String]

    package init(
        attempts: [AttemptRecord],
        calls: [CallRecord],
        ledger: [LedgerRow]?,
        attribution: [AttributionRecord] = [],
        configuration: VerdictsConfiguration = VerdictsConfiguration(),
        maxRetries: Int = 2,
        runStartEpoch: Double = 0,
        deviceIds: [String: String] = [:],
        launchDeviceIds: [DeviceLaunch: String] = [:]
    ) {
        self.attempts = attempts
        self.calls = calls
        self.ledger = ledger
        self.attribution = attribution
        self.configuration = configuration
        self.maxRetries = maxRetries
        self.runStartEpoch = runStartEpoch
        self.deviceIds = deviceIds
        self.launchDeviceIds = launchDeviceIds
    }

    /// The non-record inputs, as every pass sees them.
    package var context: VerdictContext {
        VerdictContext(
            configuration: configuration, maxRetries: maxRetries, ledger: ledger, runStartEpoch: runStartEpoch,
            deviceIds: deviceIds, launchDeviceIds: launchDeviceIds)
    }
}
