import Foundation
import OptoLink
import OptoLinkHTTP
import OptoLinkStaging
import SoakSupport
import SoakRecords
import SoakVerdicts
import SoakReports

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `optolink-soak bench`: measures the driver's own cost against one embedded emulator:
/// memory per virtual device, request rate through the SDK versus a bare URLSession loop
/// (and `wrk` for reference) on `POST /sdk/events`, and open-model start lag.
enum SoakBench {
    static func log(_ text: String) { FileHandle.standardError.write(Data("bench: \(text)\n".utf8)) }

    /// A started embedded emulator with its limits off (the bench measures the driver, not the
    /// limits), or `nil` after saying why it did not start.
    static func startEmulator() async -> StagingServer? {
        var configuration = StagingConfiguration()
        configuration.limits.enabled = false
        let server = StagingServer(configuration: configuration)
        do {
            try await server.start()
            return server
        } catch {
            log("error: the embedded emulator did not start: \(error)")
            return nil
        }
    }

    static func run(_ options: BenchOptions) async -> Int32 {
        let outPath = options.outPath ?? defaultOutPath()
        if let problem = PathProblem.creatingDirectory(URL(fileURLWithPath: outPath).deletingLastPathComponent().path) {
            log("error: --out \(problem)")
            return 2
        }
        guard let server = await startEmulator() else { return 2 }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("soak-bench-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        #if DEBUG
            let build = "debug"
        #else
            let build = "release"
        #endif
        var results = BenchResults(
            soakVersion: OptoLinkSoak.version, date: ISO8601DateFormatter().string(from: Date()), build: build,
            cores: ProcessInfo.processInfo.activeProcessorCount,
            notes: [
                "emulator, driver and (for wrk) the load generator share this machine's cores",
                "driver phase: closed model, each device firstLaunch then trackEvent in a loop; rate over the steady part",
                "SDK transport in every phase: \(options.transport.rawValue)",
            ], memory: nil, throughput: nil, startLag: nil)
        if build == "debug" { log("warning: debug build; benchmark with `swift run -c release optolink-soak bench`") }

        // Memory first, in a fresh process, so freed memory of other phases cannot hide growth.
        log("memory: \(options.deviceCounts) launched devices")
        results.memory = await memory(
            server: server, counts: options.deviceCounts, scratch: scratch, transport: options.transport)
        log("throughput: driver vs bare URLSession vs wrk, \(options.seconds) s each")
        results.throughput = await throughput(
            server: server, seconds: options.seconds, scratch: scratch, transport: options.transport)
        await server.stop()
        // The start-lag phase gets an emulator of its own, as a run does: the earlier phases leave
        // tens of thousands of devices and an in-memory ledger of every event they sent (its
        // array regrows by copying, hundreds of thousands of rows) in the one above.
        log("start lag at \(options.lagRate) journeys/s")
        guard let lagServer = await startEmulator() else { return 2 }
        results.startLag = await startLag(
            server: lagServer, rate: options.lagRate, seconds: options.seconds, scratch: scratch,
            transport: options.transport)
        await lagServer.stop()

        do {
            try AtomicFile.writeJSON(results, to: URL(fileURLWithPath: outPath))
        } catch {
            log("error: cannot write \(outPath): \(error.localizedDescription)")
            return 2
        }
        print(results.table, terminator: "")
        print("results: \(outPath)")
        return 0
    }

    /// `Reports/bench-<UTC timestamp>/soak-bench.json`: a new directory per bench.
    static func defaultOutPath() -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        return "Reports/bench-\(formatter.string(from: Date()))/soak-bench.json"
    }

    static func makeSession() -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = 128
        configuration.timeoutIntervalForRequest = 11
        configuration.urlCache = nil
        return URLSession(configuration: configuration)
    }

    /// A backend over the bench's one emulator (not stopped by the run).
    struct SharedBackend: SoakBackend {
        let server: StagingServer
        var baseURL: URL { server.baseURL }
        var kind: String { "embedded" }
        func ledger() async throws -> [LedgerRow]? { nil }
        func counters() async -> JSONValue? { nil }
        func stop() async {}
        /// The bench judges no reconciliation: its runs skip that pass, as a remote run without a ledger.
        var mayHaveLedger: Bool { false }
    }

    static func runProfile(
        _ profile: SoakProfile, server: StagingServer, out: URL, devices: [VirtualDevice]? = nil,
        transport: SoakTransportKind = .native
    ) async -> SoakRunResult {
        var options = SoakRunOptions(profilePath: "bench")
        options.transport = transport
        options.outDirectory = out.path
        options.progress = false
        var run = SoakRun(options: options)
        run.makeBackend = { _, _ in SharedBackend(server: server) }
        run.log = { _ in }
        if let devices { run.makeDevices = { _ in devices } }
        return await run.execute(profile: profile)
    }

    static func profile(name: String, devices: Int, journey: [JourneyStep], load: LoadSettings) -> SoakProfile {
        SoakProfile(
            name: name, description: nil, seed: 1, devices: DevicePopulation(count: devices),
            journeys: [Journey(name: name, steps: journey)], load: load, sdk: SDKSettings(), backend: nil,
            expect: VerdictsConfiguration())
    }

    // MARK: Throughput

    static func throughput(
        server: StagingServer, seconds: Double, scratch: URL, transport: SoakTransportKind
    ) async -> BenchResults.Throughput {
        let concurrency = 64
        let warmup = 1.0
        let driverProfile = profile(
            name: "bench-driver", devices: concurrency,
            journey: [.firstLaunch, .event(name: "bench", properties: ["k": "v"], repeat: 10_000)],
            load: LoadSettings(model: .closed, concurrency: concurrency, duration: seconds + warmup, grace: 1))
        let out = scratch.appendingPathComponent("driver")
        _ = await runProfile(driverProfile, server: server, out: out, transport: transport)
        let attempts = (try? ReportCSVReader.attempts(out.appendingPathComponent("attempts.csv"))) ?? []
        let steady = attempts.filter { $0.actualStart >= warmup && $0.end <= warmup + seconds && $0.status == 200 }
        let driverRate = Double(steady.count) / seconds

        let bareRate = await bareLoop(server: server, concurrency: concurrency, seconds: seconds)
        let (wrkRate, wrkCommand) = wrk(server: server, concurrency: concurrency, seconds: seconds, scratch: scratch)
        let ratio = bareRate > 0 ? driverRate / bareRate : 0
        return .init(
            route: "POST /sdk/events", concurrency: concurrency, seconds: seconds, driverRequestsPerSecond: driverRate,
            bareURLSessionRequestsPerSecond: bareRate, ratio: ratio, targetRatio: 0.8, pass: ratio >= 0.8,
            wrkRequestsPerSecond: wrkRate, wrkCommand: wrkCommand)
    }

    static let deviceId = "b3b1c7de-0000-4000-8000-00000000be0c"

    static func eventRequest(_ base: URL) -> URLRequest {
        var request = URLRequest(url: base.appendingPathComponent("sdk/events"))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("Bearer opl_sdk_test_acme_client", forHTTPHeaderField: "Authorization")
        request.setValue("opl_sdk_test_acme_client", forHTTPHeaderField: "X-API-Key")
        request.httpBody = Data(#"{"deviceId":"\#(deviceId)","eventName":"bench","properties":{"k":"v"}}"#.utf8)
        return request
    }

    static func registerBenchDevice(_ base: URL, session: URLSession) async {
        var request = URLRequest(url: base.appendingPathComponent("sdk/session"))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("Bearer opl_sdk_test_acme_client", forHTTPHeaderField: "Authorization")
        request.httpBody = Data(
            #"{"deviceId":"\#(deviceId)","platform":"iOS","osVersion":"18.1","sdkVersion":"bench"}"#.utf8)
        _ = try? await session.data(for: request)
    }

    static func bareLoop(server: StagingServer, concurrency: Int, seconds: Double) async -> Double {
        let session = makeSession()
        defer { session.finishTasksAndInvalidate() }
        await registerBenchDevice(server.baseURL, session: session)
        let request = eventRequest(server.baseURL)
        // Warm up the connections, then count completed 200s in the window.
        let start = ContinuousClock.now
        let warmupEnd = start + .seconds(1)
        let end = warmupEnd + .nanoseconds(Int64(seconds * 1e9))
        let counted = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<concurrency {
                group.addTask {
                    var ok = 0
                    while ContinuousClock.now < end {
                        let began = ContinuousClock.now
                        guard let (_, response) = try? await session.data(for: request) else { continue }
                        if began >= warmupEnd, ContinuousClock.now <= end,
                            (response as? HTTPURLResponse)?.statusCode == 200
                        {
                            ok += 1
                        }
                    }
                    return ok
                }
            }
            return await group.reduce(0, +)
        }
        return Double(counted) / seconds
    }

    static func wrk(server: StagingServer, concurrency: Int, seconds: Double, scratch: URL) -> (Double?, String?) {
        let candidates = ["/usr/bin/wrk", "/usr/local/bin/wrk"]
        guard let path = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            log("wrk not installed; skipping the wrk reference")
            return (nil, nil)
        }
        let script = scratch.appendingPathComponent("events.lua")
        let lua = """
            wrk.method = "POST"
            wrk.headers["Content-Type"] = "application/json"
            wrk.headers["Authorization"] = "Bearer opl_sdk_test_acme_client"
            wrk.body = '{"deviceId":"\(deviceId)","eventName":"bench","properties":{"k":"v"}}'
            """
        try? FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        guard (try? Data(lua.utf8).write(to: script)) != nil else { return (nil, nil) }
        let arguments = [
            "-t2", "-c\(concurrency)", "-d\(Int(seconds.rounded(.up)))s", "-s", script.path,
            server.baseURL.appendingPathComponent("sdk/events").absoluteString,
        ]
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return (nil, nil) }
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let command = "wrk " + arguments.joined(separator: " ")
        guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("Requests/sec:") }),
            let value = Double(line.split(separator: " ").last.map(String.init) ?? "")
        else { return (nil, command) }
        return (value, command)
    }

    // MARK: Start lag

    static func startLag(
        server: StagingServer, rate: Double, seconds: Double, scratch: URL, transport: SoakTransportKind
    ) async
        -> BenchResults.StartLag
    {
        let lagProfile = profile(
            name: "bench-lag", devices: 1000, journey: [.relaunch, .event(name: "tick", properties: [:], repeat: 1)],
            load: LoadSettings(
                model: .open, startRate: rate, stages: [.init(duration: seconds, target: rate)], maxInFlight: 5000,
                grace: 10))
        // Install every device first, so the measured journeys are the steady state (relaunch
        // + one event = one request each, 500 req/s) rather than first-launch matches.
        let devices = VirtualDevice.population(lagProfile.devices, seed: 3)
        await launchAll(
            devices, server: server, scratch: scratch.appendingPathComponent("lag-install"), transport: transport)
        let result = await runProfile(
            lagProfile, server: server, out: scratch.appendingPathComponent("lag"), devices: devices,
            transport: transport)
        let journeys = result.summary?.journeys
        let lag = journeys?.startLag
        let p99 = lag?.p99 ?? .infinity
        return .init(
            rate: rate, seconds: seconds, journeys: journeys?.started ?? 0, lateStarts: journeys?.lateStarts ?? 0,
            p50: lag?.p50 ?? 0, p99: p99, max: lag?.max ?? 0, targetP99: 0.005, pass: p99 <= 0.005)
    }

    // MARK: Memory

    /// Launches (`firstLaunch`) every device in `batch` with 64 in flight; the devices keep
    /// their live SDK instance.
    static func launchAll(
        _ batch: [VirtualDevice], server: StagingServer, scratch: URL, transport kind: SoakTransportKind
    ) async {
        let session = makeSession()
        defer { session.finishTasksAndInvalidate() }
        let timeline = RunTimeline()
        guard let recorder = try? SoakRecorder(directory: scratch, timeline: timeline) else { return }
        let client =
            kind == .native
            ? try? HTTPClient(configuration: .init(responseLimits: SoakClientLoops.responseLimits)) : nil
        let transport: any OptoLinkTransport =
            client.map { NativeTransport(client: $0) } ?? URLSessionTransport(session: session)
        let runner = JourneyRunner(
            recorder: recorder, timeline: timeline, transport: transport, session: session,
            clock: ContinuousClock(), control: RunControl(), baseURL: server.baseURL, sdk: SDKSettings(),
            runId: "bench",
            linkIds: [:])
        let launcher = runner
        await withTaskGroup(of: Void.self) { group in
            var running = 0
            for device in batch {
                if running >= 64 {
                    await group.next()
                    running -= 1
                }
                group.addTask { _ = await launcher.launch(device, fresh: true, due: timeline.now()) }
                running += 1
            }
        }
        await client?.shutdown()
        recorder.finish()
    }

    static func memory(
        server: StagingServer, counts: [Int], scratch: URL, transport: SoakTransportKind
    ) async -> BenchResults.Memory {
        let all = VirtualDevice.population(DevicePopulation(count: counts.max() ?? 0), seed: 9)
        var rss: [Int] = []
        var launched = 0
        for (index, count) in counts.sorted().enumerated() {
            await launchAll(
                Array(all[launched..<count]), server: server,
                scratch: scratch.appendingPathComponent("memory-\(index)"),
                transport: transport)
            launched = count
            rss.append(ProcessMemory.residentBytes() ?? 0)
        }
        let span = Double((counts.max() ?? 0) - (counts.min() ?? 0))
        let slope = rss.count >= 2 && span > 0 ? Double(rss[rss.count - 1] - rss[0]) / span : 0
        _ = all.count  // keep every device (and its live SDK instance) alive until measured
        return .init(
            devices: counts.sorted(), rssBytes: rss, bytesPerDevice: slope, targetBytesPerDevice: 51_200,
            pass: slope <= 51_200)
    }
}
