import Foundation
import OptoLink
import OptoLinkHTTP
import OptoLinkStaging
import Synchronization
import Testing

@testable import OptoLinkSoak
import SoakRecords
import SoakVerdicts

extension WholeRuns {
    /// `--transport`, `--pool`, `--header`: parsing, the https note, the adapter's error mapping, and
    /// the same verdicts whichever transport carries a run.
    @Suite(.serialized, .timeLimit(.minutes(3)))
    struct TransportTests {
        @Test func transportPoolAndHeaderFlagsParse() throws {
            let command = try SoakCommandLine.parse([
                "run", "p.json", "--transport", "urlsession", "--pool", "per-device", "--connections", "16",
                "--header", "X-Waf-Token: abc: def", "--header=X-Tenant:  t1 ",
            ])
            guard let o = command.subcommand(RunSubcommand.self)?.options else {
                Issue.record("not a run: \(command)")
                return
            }
            #expect(o.transport == .urlsession && o.pool == .perPartition && o.connections == 16)
            #expect(o.headers == [.init(name: "X-Waf-Token", value: "abc: def"), .init(name: "X-Tenant", value: "t1")])
            guard let defaults = try SoakCommandLine.parse(["run", "p.json"]).subcommand(RunSubcommand.self)?.options
            else { return }
            #expect(defaults.transport == .native && defaults.pool == .shared && defaults.headers.isEmpty)
            #expect(defaults.clientLoops == nil)
            guard
                let loops = try SoakCommandLine.parse(["run", "p.json", "--client-loops", "3"]).subcommand(
                    RunSubcommand.self)?.options
            else {
                return
            }
            #expect(loops.clientLoops == 3)
        }

        @Test func clientLoopsDefaultToOnePerCore() {
            #expect(SoakClientLoops.default(cores: 8) == 8)
            #expect(SoakClientLoops.default(cores: 2) == 2)
            #expect(SoakClientLoops.default(cores: 0) == 1)
        }

        /// Shared pool: devices take the loops in turn. Per-device pool: each device runs on the
        /// loop that holds its connection.
        @Test(arguments: HTTPClient.PoolMode.allCases)
        func eachDeviceRunsOnOneLoop(_ mode: HTTPClient.PoolMode) async throws {
            let client = try HTTPClient(configuration: .init(poolMode: mode, loopCount: 3))
            let devices = VirtualDevice.population(.init(count: 10), seed: 1)
            let byId = SoakClientLoops.executors(of: client, for: devices)
            let executors = devices.compactMap { byId[$0.id]?.asUnownedTaskExecutor() }
            let loops = client.taskExecutors.map { $0.asUnownedTaskExecutor() }
            await client.shutdown()
            #expect(executors.count == devices.count)
            for (index, device) in devices.enumerated() {
                let expected =
                    mode == .shared
                    ? loops[index % 3] : client.taskExecutor(forPartition: device.id).asUnownedTaskExecutor()
                #expect(executors[index] == expected)
            }
            #expect(Set(executors.map { loops.firstIndex(of: $0) }).count > 1)
        }

        @Test(arguments: [
            (["--transport", "curl"], "--transport: \"curl\" is not native or urlsession"),
            (["--pool", "one"], "--pool: \"one\" is not shared or per-device"),
            (["--client-loops", "0"], "--client-loops: \"0\" is not a thread count (1…256)"),
            (["--header", "NoColon"], "--header: \"NoColon\" is not 'Name: value'"),
            (["--header", "Bad Name: v"], "--header: \"Bad Name\" is not a valid header name (letters, digits, -)"),
            (["--header", "X-A: 1", "--header", "x-a: 2"], "--header x-a: given twice"),
            (
                ["--header", "authorization: Bearer other"],
                "--header authorization: Authorization is set by the SDK or the run (the contract's headers); "
                    + "it cannot be overridden"
            ),
            (
                ["--header", "X-API-Key: k"],
                "--header X-API-Key: X-API-Key is set by the SDK or the run (the contract's headers); "
                    + "it cannot be overridden"
            ),
        ])
        func badTransportFlagsNameTheProblem(_ flags: [String], _ message: String) {
            #expect(throws: SoakUsageError(message: message)) { try SoakCommandLine.parse(["run", "p.json"] + flags) }
        }

        @Test func httpsRunsOnTheNativeTransportWhereOpenSSLIs() throws {
            let https = try #require(URL(string: "https://staging.example"))
            let (kind, note) = SoakTransportKind.resolve(.native, baseURL: https)
            #if os(Linux)
                #expect(kind == .native && note == nil)
            #else
                #expect(kind == .urlsession)
                #expect(note?.contains("https") == true && note?.contains("URLSession") == true)
            #endif
            let http = try #require(URL(string: "http://127.0.0.1:8080"))
            #expect(SoakTransportKind.resolve(.native, baseURL: http) == (.native, nil))
            #expect(SoakTransportKind.resolve(.urlsession, baseURL: https) == (.urlsession, nil))
        }

        @Test func urlsSplitIntoHostPortAndTarget() {
            #expect(NativeTransport.split("http://127.0.0.1:8080/sdk/events")! == ("127.0.0.1", 8080, "/sdk/events"))
            #expect(
                NativeTransport.split("http://h/a%20b/data?deviceId=x%2By")! == ("h", 80, "/a%20b/data?deviceId=x%2By"))
            #expect(NativeTransport.split("http://[::1]:9/x")! == ("::1", 9, "/x"))
            #expect(NativeTransport.split("http://h:81")! == ("h", 81, "/"))
            #expect(NativeTransport.split("http://h?q=1")! == ("h", 80, "/?q=1"))
            #expect(NativeTransport.split("http://h/p#frag")! == ("h", 80, "/p"))
            #expect(NativeTransport.splitURL("https://h/x")! == ("h", 443, "/x", true))
            #expect(NativeTransport.splitURL("https://[::1]:8443")! == ("::1", 8443, "/", true))
            #expect(NativeTransport.splitURL("http://h/x")! == ("h", 80, "/x", false))
            for bad in [
                "ftp://h/x", "https://", "http://", "http://u@h/x", "http://h:0/x", "http://h:99999/", "http://[::1/x",
            ] {
                #expect(NativeTransport.split(bad) == nil, "\(bad)")
            }
        }

        @Test func nativeFailuresBecomeTheURLErrorsTheSDKClassifies() {
            let cases: [(HTTPClientError, URLError.Code)] = [
                (.connectionRefused, .cannotConnectToHost), (.cannotConnect(errno: 24), .cannotConnectToHost),
                (.cannotResolve(host: "x"), .cannotFindHost), (.connectionReset, .networkConnectionLost),
                (.connectionClosed, .networkConnectionLost), (.badResponse(.truncated), .badServerResponse),
                (.timedOut, .timedOut), (.cancelled, .cancelled),
                (.tlsFailed(TLSFailure(.unknownCA, "x")), .serverCertificateUntrusted),
                (.tlsFailed(TLSFailure(.expired, "x")), .serverCertificateHasBadDate),
                (.tlsFailed(TLSFailure(.hostnameMismatch, "x")), .secureConnectionFailed),
            ]
            for (error, code) in cases { #expect(NativeTransport.urlError(error).code == code, "\(error)") }
        }

        @Test func extraHeadersReachTheServerAndNeverReplaceTheSDKs() async throws {
            let seen = Mutex<[HTTPHeaders]>([])
            try await withHTTPServer(
                .init(),
                handler: { request, _ in
                    seen.withLock { $0.append(request.headers) }
                    return .respond(HTTPResponse(status: 200))
                }
            ) { server in
                let client = try HTTPClient()
                let transport = NativeTransport(client: client)
                let middleware = ExtraHeadersMiddleware(headers: [
                    .init(name: "X-Waf-Token", value: "w"), .init(name: "x-api-key", value: "sneaky"),
                ])
                let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/sdk/events?x=1"))
                let request = OptoLinkHTTPRequest(
                    method: "POST", url: url, headers: ["X-API-Key": "real", "Content-Type": "application/json"],
                    body: Data("{}".utf8))
                let context = OptoLinkRequestContext(endpoint: .events, callId: 1, attempt: 1, timeout: .seconds(2))
                let response = try await middleware.intercept(request, context: context) { request, context in
                    try await transport.send(request, context: context)
                }
                #expect(response.status == 200)
                await client.shutdown()
            }
            let headers = try #require(seen.withLock { $0.first })
            #expect(headers["X-Waf-Token"] == "w")
            #expect(headers.values(for: "X-API-Key") == ["real"])
        }

        /// A device's one middleware refuses an attempt past the cutoff before anything reaches
        /// the next layer, and otherwise adds `X-Forwarded-For` and the `--header` fields without
        /// replacing a header the SDK set, as the three separate middlewares did.
        @Test func theDevicesMiddlewareCutsThenSetsItsHeaders() async throws {
            let control = RunControl()
            let timeline = RunTimeline()
            let middleware = DeviceAttemptMiddleware(
                cutoff: RunCutoff(control: control, timeline: timeline),
                forwardedFor: ForwardedForMiddleware(clientIP: "10.1.2.3"),
                extraHeaders: ExtraHeadersMiddleware(headers: [
                    .init(name: "X-Waf-Token", value: "w"), .init(name: "x-api-key", value: "sneaky"),
                ]))
            let request = OptoLinkHTTPRequest(
                method: "POST", url: try #require(URL(string: "http://127.0.0.1:1/sdk/events")),
                headers: ["X-API-Key": "real"], body: Data("{}".utf8))
            let context = OptoLinkRequestContext(endpoint: .events, callId: 1, attempt: 1, timeout: .seconds(2))
            let seen = Mutex<[String: String]?>(nil)
            let response = try await middleware.intercept(request, context: context) { request, _ in
                seen.withLock { $0 = request.headers }
                return OptoLinkHTTPResponse(status: 200, headers: [:], body: Data())
            }
            #expect(response.status == 200)
            let headers = try #require(seen.withLock { $0 })
            #expect(headers == ["X-API-Key": "real", "X-Forwarded-For": "10.1.2.3", "X-Waf-Token": "w"])

            control.markCut()
            seen.withLock { $0 = nil }
            await #expect(throws: URLError.self) {
                _ = try await middleware.intercept(request, context: context) { request, _ in
                    seen.withLock { $0 = request.headers }
                    return OptoLinkHTTPResponse(status: 200, headers: [:], body: Data())
                }
            }
            #expect(seen.withLock { $0 } == nil, "an attempt past the cutoff never reaches the next layer")
        }

        // MARK: - Same verdicts on both transports

        private static func profile(_ name: String) throws -> String {
            let url = ShippedProfiles.url(name)
            return try String(contentsOf: url, encoding: .utf8)
        }

        private func run(_ profile: String, _ transport: SoakTransportKind) async throws -> SoakSummary {
            let e2e = try EndToEndRun(profile: profile)
            // In virtual time: the Retry-After waits and the emulator's windows take no real time.
            let clock = SteppingClock()
            let result = await e2e.makeVirtualRun(on: clock) { $0.transport = transport }.execute(driving: clock)
            let summary = try #require(result.summary, "no summary: \(result.error ?? "?")")
            #expect(summary.run.transport == transport.rawValue)
            // Attempts and calls went through the recorder's writer thread, and it applied them all.
            let recording = try #require(summary.run.recording)
            #expect(recording.backlogPeak >= 1 && recording.drainSeconds >= 0)
            #expect(summary.totals.attempts > 0)
            // Latency thresholds depend on how busy the machine is; the verdicts' must pass on both.
            let verdictFailures = summary.thresholds.filter { threshold in
                !threshold.passed && !threshold.expression.contains("latency")
            }
            #expect(verdictFailures.isEmpty, "\(transport): \(verdictFailures.map(\.line))")
            return summary
        }

        @Test func smokeGivesTheSameResultsOnBothTransports() async throws {
            let text = try Self.profile("smoke.json")
            let native = try await run(text, .native)
            let urlsession = try await run(text, .urlsession)
            for summary in [native, urlsession] {
                let verdicts = try #require(summary.verdicts)
                #expect(verdicts.retries.violations == 0)
                #expect(summary.totals.errors == 0)
            }
            // No limits, no faults: the same seed gives the same calls and the same answers. (Which
            // fingerprint rung a match lands on depends on timing, so only the statuses are compared.)
            #expect(native.endpoints.mapValues(\.byStatus) == urlsession.endpoints.mapValues(\.byStatus))
            #expect(native.deferredMatch.firstLaunches == urlsession.deferredMatch.firstLaunches)
        }

        @Test func rateLimitsGiveTheSameVerdictsOnBothTransports() async throws {
            let text = try Self.profile("verdicts/rate-limits-short.json")
            let native = try await run(text, .native)
            let urlsession = try await run(text, .urlsession)
            var judged: [Int] = []
            for summary in [native, urlsession] {
                let verdicts = try #require(summary.verdicts)
                #expect(verdicts.retries.violations == 0)
                #expect(verdicts.backoff.rateLimited.early == 0)
                #expect(verdicts.backoff.rateLimited.checked > 0)
                for name in ["match", "events", "session_identity"] {
                    let bucket = try #require(verdicts.limits.buckets[name])
                    #expect(bucket.enforcedExactly, "\(summary.run.transport ?? "?") \(name): \(bucket)")
                }
                judged.append(verdicts.backoff.rateLimited.checked)
            }
            // The emulator's fixed windows sit on whole epoch seconds and each run starts at its own
            // fraction of a second, so a few requests move between windows from one run to the next,
            // whatever the transport (seen in virtual time: 395 vs 397). The verdicts above are what
            // must be identical.
            let spread = abs(judged[0] - judged[1])
            #expect(
                spread * 20 <= max(judged[0], judged[1]), "429s judged: native \(judged[0]), urlsession \(judged[1])")
        }
    }
}
