import Foundation
import OptoLink
import OptoLinkStaging
import Synchronization

import OptoLinkSoak
import SoakSupport
import SoakRecords

/// Helpers for end-to-end runs against the embedded emulator: a profile written to a temp
/// file, a temp report directory, the emulator kept for its counters, messages captured.
final class EndToEndRun: Sendable {
    let directory: URL
    let profileURL: URL
    private let backend = Mutex<EmbeddedBackend?>(nil)
    private let messages = Mutex<[String]>([])

    init(profile json: String) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("soak-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        profileURL = directory.appendingPathComponent("profile.json")
        try Data(json.utf8).write(to: profileURL)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    var reportDirectory: URL { directory.appendingPathComponent("report") }

    /// The run, configured to keep the emulator and capture messages.
    func makeRun(_ configure: (inout SoakRunOptions) -> Void = { _ in }) -> SoakRun {
        var options = SoakRunOptions(profilePath: profileURL.path)
        options.outDirectory = reportDirectory.path
        options.progress = false
        configure(&options)
        var run = SoakRun(options: options)
        run.makeBackend = { [self] profile, options in
            let started = try await EmbeddedBackend.start(profile)
            backend.withLock { $0 = started }
            return started
        }
        run.log = { [self] line in messages.withLock { $0.append(line) } }
        return run
    }

    /// The run in virtual time on `clock` (drive it beside the run): the driver, every SDK
    /// instance, the recorder and the emulator's limiter all read it, so a `Retry-After` of N
    /// seconds or a limiter window takes no real time and is exact. Requests still go over
    /// real sockets to the embedded emulator, through the run's own transport; time stands
    /// still while one is in flight.
    func makeVirtualRun(on clock: SteppingClock, _ configure: (inout SoakRunOptions) -> Void = { _ in }) -> SoakRun {
        var run = makeRun(configure)
        run.clock = clock
        run.wrapTransport = { ClockHoldingTransport(inner: $0, clock: clock) }
        run.makeBackend = { [self] profile, _ in
            let origin = VirtualEpoch(clock: clock)
            let started = try await EmbeddedBackend.start(profile, clock: StagingClock { origin.now })
            backend.withLock { $0 = started }
            return VirtualTimeBackend(inner: started, origin: origin)
        }
        return run
    }

    /// Runs `count` shards of the profile at once against `baseURL`, with one `--start-at` 1.5 s
    /// ahead and one run id, each into `directory/shard-I`; returns their results and
    /// directories, by shard index.
    func runShards(
        _ count: Int, against baseURL: URL, runId: String
    ) async -> (results: [SoakRunResult], directories: [String]) {
        let startAt = (Date().timeIntervalSince1970 + 1.5).rounded(.up)
        let directories = (0..<count).map { directory.appendingPathComponent("shard-\($0)").path }
        let results = await withTaskGroup(of: (Int, SoakRunResult).self) { group in
            for index in 0..<count {
                var options = SoakRunOptions(profilePath: profileURL.path)
                options.baseURL = baseURL
                options.shard = SoakShard(index: index, count: count)
                options.startAt = startAt
                options.runId = runId
                options.outDirectory = directories[index]
                options.progress = false
                var run = SoakRun(options: options)
                run.log = { _ in }
                // Both shards and other tests share this process: its CPU is not a shard's own.
                run.processCPUSeconds = { 0 }
                group.addTask { (index, await run.execute()) }
            }
            return await group.reduce(into: [:]) { $0[$1.0] = $1.1 }.sorted { $0.key < $1.key }.map(\.value)
        }
        return (results, directories)
    }

    var server: StagingServer? { backend.withLock { $0?.server } }
    var log: [String] { messages.withLock { $0 } }

    func attempts() throws -> [AttemptRecord] {
        try ReportCSVReader.attempts(reportDirectory.appendingPathComponent("attempts.csv"))
    }

    func calls() throws -> [CallRecord] {
        try ReportCSVReader.calls(reportDirectory.appendingPathComponent("calls.csv"))
    }

    func summaryJSON() throws -> [String: Any] {
        let data = try Data(contentsOf: reportDirectory.appendingPathComponent("summary.json"))
        return try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
    }
}

/// A small profile: `devices` virtual devices, one journey at `rate` journeys/s. Its grace is
/// 60 s: a run whose journeys all end stops at once, so the grace only matters when a loaded
/// machine starves the run, and then it keeps the run's counts whole instead of cut.
func e2eProfile(
    devices: Int, rate: Double, steps: String, extra: String = "", thresholds: String = "[]",
    load: String? = nil
) -> String {
    """
    {"name": "e2e", "seed": 3,
     "devices": {"count": \(devices), "clipboardSurvives": 1, "osVersions": {"18.1": 1, "17.5": 1}},
     "journeys": [{"name": "j", "steps": [\(steps)]}],
     "load": \(load ?? #"{"model": "open", "startRate": \#(rate), "stages": [{"duration": \#(Double(devices) / rate), "target": \#(rate)}], "iterations": \#(devices), "grace": 60}"#),
     "sdk": {"timeout": 3},
     "backend": {"limits": {"session_identity": {"limit": 100000, "windowSeconds": 60}, "events": {"limit": 100000, "windowSeconds": 60}}}
     \(extra),
     "expect": {"thresholds": \(thresholds)}}
    """
}

extension SoakRun {
    /// Executes with `clock` advancing beside the run (a run made by ``EndToEndRun/makeVirtualRun(on:_:)``).
    func execute(driving clock: SteppingClock) async -> SoakRunResult {
        let driving = Task { await clock.drive() }
        defer { driving.cancel() }
        return await execute()
    }
}

/// Sends through `inner` with `clock` held still while the request is in flight.
struct ClockHoldingTransport: OptoLinkTransport {
    let inner: any OptoLinkTransport
    let clock: SteppingClock

    func send(_ request: OptoLinkHTTPRequest, context: OptoLinkRequestContext) async throws -> OptoLinkHTTPResponse {
        try await clock.holding { try await inner.send(request, context: context) }
    }
}

/// The emulator's time in a virtual run: the wall clock until the run starts (the reachability
/// probe), then the run's epoch plus the virtual seconds since, so the emulator's windows and
/// the recorder's timestamps are one timeline.
final class VirtualEpoch: Sendable {
    private let clock: SteppingClock
    private let origin = Mutex<(epoch: Double, seconds: Double)?>(nil)

    init(clock: SteppingClock) { self.clock = clock }

    func start(atEpoch epoch: Double) {
        let seconds = clock.seconds
        origin.withLock { $0 = (epoch, seconds) }
    }

    var now: Double {
        guard let origin = origin.withLock({ $0 }) else { return Date().timeIntervalSince1970 }
        return origin.epoch + (clock.seconds - origin.seconds)
    }
}

/// The embedded emulator of a virtual run: starts its virtual timeline with the run.
struct VirtualTimeBackend: SoakBackend {
    let inner: EmbeddedBackend
    let origin: VirtualEpoch

    var baseURL: URL { inner.baseURL }
    var kind: String { inner.kind }
    func ledger() async throws -> [LedgerRow]? { try await inner.ledger() }
    func counters() async -> JSONValue? { await inner.counters() }
    func stop() async { await inner.stop() }

    func runStarted(atEpoch epoch: Double) {
        origin.start(atEpoch: epoch)
        inner.runStarted(atEpoch: epoch)
    }
}
