import Foundation
import OptoLink
import OptoLinkHTTP
import SoakVerdicts

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A step before the run's first journey failed; the run stops with exit code 2 and this message.
struct RunSetupFailure: Error {
    var message: String
}

/// The steps that prepare a run before its first journey: the URLSession, the backend's
/// reachability and clicked links, the devices' source addresses, the start instant, the
/// recorder and ledger, the transport and the live metrics endpoint.
extension SoakRun {
    /// The URLSession the `urlsession` transport and the probes use: no cache, no cookies, a
    /// request timeout just over the SDK's.
    static func session(for profile: SoakProfile) -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = 128
        configuration.timeoutIntervalForRequest = Swift.max(1, profile.sdk.timeout.rounded(.up) + 1)
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        return URLSession(configuration: configuration)
    }

    /// Checks the backend answers and resolves the profile's clicked links to their ids, over
    /// the transport the run takes (the native client for `https://`, so `--cacert` and
    /// `--insecure` hold).
    func resolveLinks(
        _ profile: SoakProfile, backend: any SoakBackend, transport: SoakTransportKind, session: URLSession
    ) async throws -> [String: String] {
        guard transport == .native, backend.baseURL.scheme?.lowercased() == "https" else {
            try await BackendProbe.checkReachable(backend.baseURL, session: session)
            return try await BackendProbe.resolveClickedLinks(profile, baseURL: backend.baseURL) { request in
                guard let (data, response) = try? await session.optoLinkData(for: request),
                    let status = (response as? HTTPURLResponse)?.statusCode
                else { return nil }
                return (data, status)
            }
        }
        try await NativeBackendProbe.checkReachable(backend.baseURL, tls: options.tls)
        let client = try HTTPClient(configuration: .init(maxConnectionsPerHost: 1, tls: options.tls))
        do {
            let linkIds = try await BackendProbe.resolveClickedLinks(profile, baseURL: backend.baseURL) {
                await NativeBackendProbe.get($0, through: client)
            }
            await client.shutdown()
            return linkIds
        } catch {
            await client.shutdown()
            throw error
        }
    }

    /// The virtual devices, bound to their local addresses when the profile has `localIPs`,
    /// and the lines the address check printed (they go into the report's notes).
    func placeDevices(
        _ profile: SoakProfile, backend: any SoakBackend, transport: SoakTransportKind
    ) async throws -> (devices: [VirtualDevice], notes: [String]) {
        let devices = makeDevices(profile)
        guard let list = profile.devices.localIPs else { return (devices, []) }
        let check = try await SourceAddressCheck.run(
            list: list, devices: devices, shard: options.shard ?? .whole, baseURL: backend.baseURL,
            transport: transport, forwardedFor: options.forwardedFor, tls: options.tls,
            adminToken: options.adminToken)
        for line in check.lines { log(line) }
        return (check.plan.bind(devices), check.lines)
    }

    /// The run's timeline, started now or at `--start-at`, and how late this process reached
    /// that instant (seconds).
    /// - Throws: ``RunSetupFailure`` when the run was stopped while waiting.
    func startTimeline() async throws -> (timeline: RunTimeline, lateSeconds: Double) {
        guard let startAt = options.startAt else { return (RunTimeline(clock: clock), 0) }
        guard await waitForStart(startAt) else {
            throw RunSetupFailure(message: "stopped while waiting for --start-at \(startAt); nothing was run")
        }
        let lateSeconds = Swift.max(0, Date().timeIntervalSince1970 - startAt)
        if lateSeconds > 0.010 {
            log(
                "note: \(options.shard.map { "shard \($0)" } ?? "the run") started "
                    + "\(formatSeconds(lateSeconds)) s after --start-at; journeys planned before then start "
                    + "late and count as late starts")
        }
        return (RunTimeline(clock: clock, epoch: startAt, alreadyElapsed: lateSeconds), lateSeconds)
    }

    /// The report directory, the recorder writing into it, and where its ledger comes from.
    /// The embedded emulator's ledger goes to a file as it grows and reaches the live verdicts
    /// through a relay (connected once the recorder exists; entries before that are not this run's).
    /// - Throws: ``RunSetupFailure`` naming `--out` or `--ledger-file`.
    func makeRecorder(
        _ profile: SoakProfile, backend: any SoakBackend, directory: URL, timeline: RunTimeline
    ) throws -> (recorder: SoakRecorder, ledger: LedgerSource) {
        let relay = LedgerRelay()
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw RunSetupFailure(
                message: "--out \(directory.path): cannot write the report (\(error.localizedDescription))")
        }
        let ledgerFile =
            options.ledgerFilePath.map { URL(fileURLWithPath: $0) } ?? directory.appendingPathComponent("ledger.jsonl")
        let ledgerLive: Bool
        do {
            ledgerLive = try backend.followLedger(file: ledgerFile, sink: relay.forward)
        } catch {
            throw RunSetupFailure(
                message: "--ledger-file \(ledgerFile.path): cannot create (\(error.localizedDescription))")
        }
        let recorder: SoakRecorder
        do {
            let span = profile.load.effectiveDuration + profile.load.grace
            var context = VerdictContext(
                configuration: profile.expect, maxRetries: profile.sdk.maxRetries,
                ledgerStreamed: ledgerLive || backend.mayHaveLedger,
                ledgerLive: ledgerLive, horizonSeconds: Self.horizon(for: profile))
            // The run's own emulator was started for it: nothing used its buckets before.
            context.bucketsStartEmpty = backend.kind == "embedded"
            // A `--ledger` file is read after the run, and the backend may still be writing it.
            context.ledgerMayLag = !ledgerLive && options.ledgerPath != nil
            recorder = try SoakRecorder(
                directory: directory, timeline: timeline, interval: Swift.max(1, (span / 600).rounded(.up)),
                control: control, outage: OutagePlan.of(profile), verdictContext: context,
                keepsMergeInputs: options.shard != nil)
        } catch {
            throw RunSetupFailure(
                message: "--out \(directory.path): cannot write the report (\(error.localizedDescription))")
        }
        relay.connect(recorder)
        return (recorder, ledgerLive ? .live(relay) : .atEnd)
    }

    /// The one transport every virtual device shares, and the native client under it (to shut
    /// down and to spread the devices over its loops).
    /// - Throws: ``RunSetupFailure`` when the native client does not start.
    func makeTransport(
        _ kind: SoakTransportKind, session: URLSession
    ) throws -> (client: HTTPClient?, transport: any OptoLinkTransport) {
        guard kind == .native else { return (nil, URLSessionTransport(session: session)) }
        do {
            let loops = SoakClientLoops.count(
                requested: options.clientLoops, pool: options.pool, connections: options.connections, log: log)
            let client = try HTTPClient(
                configuration: .init(
                    poolMode: options.pool, maxConnectionsPerHost: options.connections, loopCount: loops,
                    responseLimits: SoakClientLoops.responseLimits, tls: options.tls))
            return (client, NativeTransport(client: client))
        } catch {
            throw RunSetupFailure(message: "--transport native: the HTTP client did not start: \(error)")
        }
    }

    /// `--metrics-listen`: serves the live counts while the run lasts; `nil` without the flag.
    /// - Throws: ``RunSetupFailure`` when it cannot listen (the recorder is finished first).
    func startMetrics(
        _ profile: SoakProfile, recorder: SoakRecorder, driver: SoakDriver, runId: String
    ) throws -> MetricsEndpoint? {
        guard let address = options.metricsListen else { return nil }
        let endpoint: MetricsEndpoint
        do {
            endpoint = try MetricsEndpoint(address: address) { [profileName = profile.name, shard = options.shard] in
                var live = recorder.liveMetrics(elapsed: recorder.timeline.now())
                live.profile = profileName
                live.runId = runId
                live.shard = shard
                live.journeysInFlight = driver.inFlight.current
                live.residentBytes = ProcessMemory.residentBytes()
                return live
            }
        } catch {
            recorder.finish()
            throw RunSetupFailure(message: "--metrics-listen \(address.host):\(address.port): cannot listen (\(error))")
        }
        let host = address.host.contains(":") ? "[\(address.host)]" : address.host
        log("metrics: http://\(host):\(endpoint.port)/metrics")
        return endpoint
    }
}
