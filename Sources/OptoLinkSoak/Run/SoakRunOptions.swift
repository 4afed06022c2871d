import Foundation
import OptoLinkHTTP
import SoakVerdicts

/// The `run` subcommand's inputs: a profile plus flags that override it.
public struct SoakRunOptions: Sendable, Equatable {
    /// Path of the JSON profile to run (see `Profiles/README.md`).
    public var profilePath: String
    /// A real staging backend; `nil` = start the embedded emulator.
    public var baseURL: URL?
    /// Overrides the profile's `sdk.apiKey` (`--api-key`).
    public var apiKey: String?
    /// Overrides the profile's `sdk.orgKey` (`--org-key`).
    public var orgKey: String?
    /// The key came as `--api-key KEY`, visible in the process list (`run` says so once).
    package var apiKeyOnCommandLine = false
    /// A header came as `--header 'Name: value'`, its value visible in the process list (`run` says so once).
    package var headerOnCommandLine = false
    /// The emulator's admin token, sent as `Authorization: Bearer` to `/__admin/*` (`--admin-token-file`,
    /// `OPTOLINK_ADMIN_TOKEN`).
    package var adminToken: String?
    /// Overrides the number of virtual devices (`--devices`).
    public var devices: Int?
    /// Seconds.
    public var duration: Double?
    /// Journeys per second (open model: a constant rate replacing the stages).
    public var rate: Double?
    /// Overrides the profile's seed (`--seed`): the same seed gives the same plan.
    public var seed: UInt64?
    /// Report directory (default `Reports/<profile>-<timestamp>/`).
    public var outDirectory: String?
    /// A ledger file exported from the real backend (a JSON array of `LedgerRow`, or JSON lines).
    public var ledgerPath: String?
    /// `--ledger-wait SECONDS`: how long to wait at most for the `--ledger` file to catch up with
    /// the run's last successful write (``LedgerCatchUp``).
    package var ledgerWaitSeconds = Self.defaultLedgerWaitSeconds
    /// The default `--ledger-wait`: a backend that writes its ledger a few seconds behind.
    package static let defaultLedgerWaitSeconds = 5.0
    /// `--ledger-file PATH`: where the embedded emulator streams its ledger (JSON lines); default
    /// `ledger.jsonl` in the report directory.
    public var ledgerFilePath: String?
    /// Print the progress line.
    public var progress = true
    /// `--threshold EXPR` (repeatable): expressions added to the profile's `expect.thresholds`.
    public var extraThresholds: [String] = []
    /// `--no-thresholds`: drop the profile's own thresholds (`--threshold` ones still apply).
    public var noThresholds = false
    /// `--junit FILE`: also write the thresholds and verdicts as JUnit XML there.
    public var junitPath: String?
    /// `--baseline DIR`: after the run, compare it with that report directory (`compare`).
    public var baselineDirectory: String?
    /// `--metrics-listen HOST:PORT`: serve live Prometheus metrics there during the run.
    package var metricsListen: MetricsListenAddress?
    /// The HTTP stack under the SDK (`--transport`); `native` for `http://` and, on Linux, `https://`.
    package var transport = SoakTransportKind.native
    /// How the native transport shares connections (`--pool`): one bounded pool, or one connection per device.
    package var pool = HTTPClient.PoolMode.shared
    /// Most connections per host of the native transport's shared pool (`--connections`).
    package var connections = 128
    /// Loop threads of the native transport (`--client-loops`); `nil`: ``SoakClientLoops/default(baseURL:cores:)``.
    package var clientLoops: Int?
    /// Extra header fields for every SDK attempt and browser click (`--header`, repeatable).
    package var headers: [SoakExtraHeader] = []
    /// `--local-ips LIST`: source addresses for the devices (replaces the profile's `devices.localIPs`).
    package var localIPs: String?
    /// `--forwarded-for`: under `--local-ips`, also send each device's address as `X-Forwarded-For`.
    package var forwardedFor = false
    /// How the native transport verifies an `https://` backend: `--cacert FILE` adds a PEM bundle
    /// to the system trust store, `--insecure` turns verification off (the report says so).
    package var tls = TLSConfiguration()

    /// Write into an `outDirectory` that already holds a report (its files are replaced).
    public var force = false
    /// `--shard I/N`: run only this shard of the plan (needs `baseURL`: one shared backend).
    package var shard: SoakShard?
    /// `--start-at EPOCH_SECONDS`: the plan's second 0 as a Unix time, shared by every shard.
    package var startAt: Double?
    /// `--run-id ID`: the run id (correlation-id prefix), shared by every shard; random when `nil`.
    package var runId: String?
    /// `--processes P`: run the plan as P shard processes of this executable, then merge them.
    package var processes: Int?
    /// Options that run `profilePath` as written: embedded emulator, default report directory.
    public init(profilePath: String) { self.profilePath = profilePath }

    /// `profile` with this run's flag overrides applied.
    /// - Throws: ``SoakProfileError`` when a flag does not fit the profile (e.g. `--rate` on a closed
    ///   model), or when a closed model asks for more concurrent devices than there are.
    package func apply(to profile: SoakProfile) throws -> SoakProfile {
        var p = profile
        if let devices { p.devices.count = devices }
        if let seed { p.seed = seed }
        if let apiKey {
            p.sdk.apiKey = apiKey
            p.sdk.apiKeyRedacted = nil
        } else if p.sdk.apiKeyRedacted == true {
            throw SoakProfileError(
                message: "sdk.apiKey is redacted (sdk.apiKeyRedacted: this profile.json comes from a report); give "
                    + "the key with --api-key-file FILE or \(SecretSources.apiKeyVariable) and --base-url, or write "
                    + "it back into sdk.apiKey and drop sdk.apiKeyRedacted")
        }
        if let orgKey { p.sdk.orgKey = orgKey }
        if let duration { p.load.duration = duration }
        if let localIPs {
            _ = try LocalAddressPool.parse(localIPs)
            p.devices.localIPs = localIPs
        }
        for expression in extraThresholds {
            if let problem = Thresholds.problem(in: expression) {
                throw SoakProfileError(message: "--threshold '\(expression)': \(problem)")
            }
        }
        p.expect.thresholds = (noThresholds ? [] : p.expect.thresholds) + extraThresholds.map { ThresholdSpec($0) }
        if let rate {
            guard p.load.model == .open else {
                throw SoakProfileError(message: "--rate: applies to the open load model only (profile uses closed)")
            }
            p.load.startRate = rate
            p.load.stages = [.init(duration: p.load.effectiveDuration, target: rate)]
        }
        if p.load.model == .closed, let concurrency = p.load.concurrency, concurrency > p.devices.count {
            throw SoakProfileError(
                message: "load.concurrency \(concurrency) is more than the \(p.devices.count) devices (devices.count"
                    + " or --devices): in the closed model each device loops its own journeys, one at a time")
        }
        return p
    }
}
