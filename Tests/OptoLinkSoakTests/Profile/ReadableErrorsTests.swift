import Foundation
import OptoLinkSoak
import OptoLinkStaging
import Testing

/// Bad paths and bad profiles get one sentence naming the path or field and the problem, never
/// `NSCocoaErrorDomain error 256`, "You don't have permission" or `error 512`.
@Suite(.timeLimit(.minutes(1)))
struct ReadableErrorsTests {
    private func scratch() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("readable-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    private func loadError(_ path: String) -> String {
        do {
            _ = try SoakProfile.load(contentsOf: URL(fileURLWithPath: path))
            return "loaded"
        } catch {
            return "\(error)"
        }
    }

    // MARK: - The profile path

    @Test func aDirectoryAsTheProfileIsNamedAsADirectory() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(
            loadError(directory.path)
                == "\(directory.path): is a directory, not a profile file (give the path of a .json file)")
    }

    /// /dev/null, and one more of its kind: a named pipe (FIFO).
    @Test func aDeviceOrPipeAsTheProfileIsNamedForWhatItIs() throws {
        #expect(loadError("/dev/null").hasPrefix("/dev/null: is a character device, not a profile file"))
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fifo = directory.appendingPathComponent("fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let message = loadError(fifo)
        #expect(message.hasPrefix("\(fifo): is "), "\(message)")
        #expect(message.contains("not a profile file"), "\(message)")
    }

    @Test func aMissingOrEmptyProfileSaysSo() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let missing = directory.appendingPathComponent("nope.json").path
        #expect(loadError(missing) == "\(missing): no such file (the profile must be a JSON file)")
        let empty = directory.appendingPathComponent("empty.json")
        try Data().write(to: empty)
        #expect(loadError(empty.path) == "\(empty.path): the profile file is empty (0 bytes)")
    }

    /// A symbolic link to a good profile is followed, not reported as a link.
    @Test func aSymlinkToAProfileIsFollowed() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let link = directory.appendingPathComponent("smoke.json")
        let target = ShippedProfiles.url("smoke.json")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
        #expect(loadError(link.path) == "loaded")
    }

    // MARK: - --out

    /// `--out` under a regular file (and one more level down) names the file in the way.
    @Test(arguments: ["report", "a/b/report"])
    func outUnderARegularFileNamesTheFile(below: String) async throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("file.txt")
        try Data("x".utf8).write(to: file)
        let run = try EndToEndRun(profile: e2eProfile(devices: 1, rate: 1, steps: #"{"kind":"firstLaunch"}"#))
        let out = file.appendingPathComponent(below).path
        let result = await run.makeRun { $0.outDirectory = out }.execute()
        #expect(result.exitCode == 2)
        #expect(
            result.error == "--out \(out): cannot be created because \(file.path) is a regular file, not a directory")
    }

    @Test func outIntoADirectoryHoldingAReportRefusesUnlessForced() async throws {
        let run = try EndToEndRun(profile: e2eProfile(devices: 1, rate: 1, steps: #"{"kind":"firstLaunch"}"#))
        try FileManager.default.createDirectory(at: run.reportDirectory, withIntermediateDirectories: true)
        let earlier = run.reportDirectory.appendingPathComponent("summary.json")
        try Data(#"{"earlier":true}"#.utf8).write(to: earlier)
        let refused = await run.makeRun().execute()
        #expect(refused.exitCode == 2)
        #expect(refused.error?.contains("already holds a report (summary.json)") == true)
        #expect(refused.error?.contains("--force") == true)
        #expect(try Data(contentsOf: earlier) == Data(#"{"earlier":true}"#.utf8), "nothing recorded is lost")

        let forced = await run.makeRun { $0.force = true }.execute()
        #expect(forced.exitCode == 0, "\(forced.error ?? "")")
        #expect(try Data(contentsOf: earlier) != Data(#"{"earlier":true}"#.utf8))
    }

    @Test func forceIsARunFlag() throws {
        guard
            let options = try SoakCommandLine.parse(["run", "p.json", "--out", "r", "--force"]).subcommand(
                RunSubcommand.self)?.options
        else {
            Issue.record("not a run")
            return
        }
        #expect(options.force)
    }

    // MARK: - Duplicate keys

    @Test func aDuplicateTopLevelKeyIsRefusedNamingIt() {
        let json = e2eProfile(devices: 1, rate: 1, steps: #"{"kind":"firstLaunch"}"#)
            .replacingOccurrences(of: #""seed": 3,"#, with: #""seed": 3, "seed": 4,"#)
        #expect(throws: SoakProfileError.self) { try SoakProfile.decode(Data(json.utf8)) }
        let message = (try? SoakProfile.decode(Data(json.utf8))).map { _ in "decoded" } ?? decodeMessage(json)
        #expect(message.hasPrefix("seed: duplicate key (again at line 1)"), "\(message)")
    }

    /// Nested, and spelled with an escape: still the same key.
    @Test func aDuplicateNestedKeyIsRefusedWithItsPath() {
        let json = e2eProfile(devices: 1, rate: 1, steps: #"{"kind":"firstLaunch", "\u006bind":"open"}"#)
        #expect(decodeMessage(json).hasPrefix("journeys[0].steps[0].kind: duplicate key"), "\(decodeMessage(json))")
    }

    @Test func anEmulatorConfigurationRefusesDuplicatesToo() {
        let json = #"{"limits": {"events": {"limit": 5, "limit": 6, "windowSeconds": 60}}}"#
        do {
            _ = try StagingConfiguration.decode(Data(json.utf8), source: "c.json")
            Issue.record("accepted")
        } catch {
            let message = (error as? StagingConfigurationError)?.message ?? "\(error)"
            #expect(message.hasPrefix("c.json: limits.events.limit: duplicate key"), "\(message)")
        }
    }

    private func decodeMessage(_ json: String) -> String {
        do {
            _ = try SoakProfile.decode(Data(json.utf8))
            return "decoded"
        } catch {
            return "\(error)"
        }
    }

    // MARK: - One wording

    @Test func theEmulatorAndTheProfileSayNotValidJSONAlike() {
        #expect(decodeMessage("{").hasPrefix("not valid JSON"))
        do {
            _ = try StagingConfiguration.decode(Data("{".utf8), source: "c.json")
        } catch {
            let message = (error as? StagingConfigurationError)?.message ?? "\(error)"
            #expect(message.hasPrefix("c.json: not valid JSON"), "\(message)")
        }
    }
}

/// The shared session + identity bucket has one name in `backend.limits` and `expect.limits`.
@Suite struct BucketNameTests {
    private func profile(backendLimits: String) -> String {
        e2eProfile(devices: 1, rate: 1, steps: #"{"kind":"firstLaunch"}"#)
            .replacingOccurrences(
                of: #""backend": {"limits": {"session_identity": {"limit": 100000, "windowSeconds": 60}, "#,
                with: #""backend": {"limits": {\#(backendLimits), "#)
    }

    @Test func sessionIdentityConfiguresTheSharedBucket() throws {
        let json = profile(backendLimits: #""session_identity": {"limit": 7, "windowSeconds": 9}"#)
        let decoded = try SoakProfile.decode(Data(json.utf8))
        let staging = try #require(try decoded.backend?.decode(StagingConfiguration.self, fieldPrefix: "backend"))
        #expect(staging.limits.sdk == StagingRateLimitRule(limit: 7, windowSeconds: 9))
        #expect(decoded.deprecations.isEmpty)
    }

    @Test func theOldNameStillWorksWithANote() throws {
        let json = profile(backendLimits: #""sdk": {"limit": 7, "windowSeconds": 9}"#)
        let decoded = try SoakProfile.decode(Data(json.utf8))
        let staging = try #require(try decoded.backend?.decode(StagingConfiguration.self, fieldPrefix: "backend"))
        #expect(staging.limits.sdk == StagingRateLimitRule(limit: 7, windowSeconds: 9))
        #expect(decoded.deprecations.count == 1)
        #expect(decoded.deprecations.first?.contains("backend.limits.session_identity") == true)
    }

    @Test func bothNamesAtOnceAreRefused() {
        let json = profile(
            backendLimits:
                #""sdk": {"limit": 7, "windowSeconds": 9}, "session_identity": {"limit": 8, "windowSeconds": 9}"#)
        #expect(throws: SoakProfileError.self) { try SoakProfile.decode(Data(json.utf8)) }
    }
}
