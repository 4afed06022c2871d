import Foundation
import OptoLinkSoak
import OptoLinkStaging
import Synchronization

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

/// A small profile: `devices` virtual devices, one journey at `rate` journeys/s.
func e2eProfile(
    devices: Int, rate: Double, steps: String, extra: String = "", thresholds: String = "[]",
    load: String? = nil
) -> String {
    """
    {"name": "e2e", "seed": 3,
     "devices": {"count": \(devices), "clipboardSurvives": 1, "osVersions": {"18.1": 1, "17.5": 1}},
     "journeys": [{"name": "j", "steps": [\(steps)]}],
     "load": \(load ?? #"{"model": "open", "startRate": \#(rate), "stages": [{"duration": \#(Double(devices) / rate), "target": \#(rate)}], "iterations": \#(devices), "grace": 10}"#),
     "sdk": {"timeout": 3},
     "backend": {"limits": {"session_identity": {"limit": 100000, "windowSeconds": 60}, "events": {"limit": 100000, "windowSeconds": 60}}}
     \(extra),
     "expect": {"thresholds": \(thresholds)}}
    """
}
