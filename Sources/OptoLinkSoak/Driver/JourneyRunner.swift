import Foundation
import OptoLink
import OptoLinkHTTP
import SoakRecords
import SoakSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Executes journeys on virtual devices: each step drives a real SDK instance (or, for a
/// click, a browser request) and reports to the recorder.
///
/// Times: a journey's first step is due at the journey's intended start; every later step
/// is due when the previous one ended (plus the think time of a `wait`). The first SDK call
/// of a step is measured from the step's due time; the whole journey is measured from its
/// intended start.
///
/// Deadlines (``RunControl``): no step starts once the step window has closed (`duration`,
/// or the stop), and no call once the cutoff has passed; work still running at the cutoff
/// is cancelled, and its journey counts as unfinished.
package struct JourneyRunner: Sendable {
    package let recorder: SoakRecorder
    /// The run's time axis (the run owns it): every step's due time, deadline check and
    /// click or open latency is read from it.
    package let timeline: RunTimeline
    /// The one transport every SDK instance shares.
    package let transport: any OptoLinkTransport
    /// The one URLSession (browser clicks use it directly).
    package let session: URLSession
    package let clock: any Clock<Duration>
    /// ``clock`` as the SDK's time source (every instance's back-off sleeps and deadlines).
    let sdkClock: any OptoLinkClock
    package let control: RunControl
    package let baseURL: URL
    package let sdk: SDKSettings
    package let runId: String
    /// Short code (`org/code`) → link id, resolved before the run (for attribution).
    package let linkIds: [String: String]
    /// Retry policy of every instance (the contract's by default; tests inject misbehaving ones).
    package let retryPolicy: any OptoLinkRetryPolicy
    /// `--header` fields added to every SDK attempt and browser click.
    package var extraHeaders: [SoakExtraHeader] = []
    /// Under `--local-ips`: also send the bound source address as `X-Forwarded-For` (`--forwarded-for`).
    package var forwardsSourceAddress = false
    /// The task executor each device's journeys and SDK instances run on, by device id (the
    /// native client's loop threads: ``SoakClientLoops``); empty: the global pool.
    package var executors: [String: any TaskExecutor] = [:]

    /// The executor `device`'s journeys and SDK instances prefer, `nil` for the global pool.
    package func executor(for device: VirtualDevice) -> (any TaskExecutor)? {
        executors[device.id]
    }

    /// `clock` as an ``OptoLinkClock`` (the SDK's own clock protocol, which exists below iOS 16).
    private static func sdkClock<C: Clock<Duration>>(_ clock: C) -> any OptoLinkClock {
        OptoLinkSwiftClock(clock)
    }

    /// The transport `device`'s SDK instances send through: the run's, and over the native one,
    /// declaring the device's executor (the SDK reads it from the transport's capabilities).
    func transport(for device: VirtualDevice) -> any OptoLinkTransport {
        guard let native = transport as? NativeTransport else { return transport }
        return native.running(on: executor(for: device))
    }

    package init(
        recorder: SoakRecorder, timeline: RunTimeline, transport: any OptoLinkTransport, session: URLSession,
        clock: any Clock<Duration>, control: RunControl, baseURL: URL, sdk: SDKSettings, runId: String,
        linkIds: [String: String],
        retryPolicy: any OptoLinkRetryPolicy = OptoLinkContractRetryPolicy()
    ) {
        self.recorder = recorder
        self.timeline = timeline
        self.transport = transport
        self.session = session
        self.clock = clock
        self.sdkClock = Self.sdkClock(clock)
        self.control = control
        self.baseURL = baseURL
        self.sdk = sdk
        self.runId = runId
        self.linkIds = linkIds
        self.retryPolicy = retryPolicy
    }

    /// Runs `journey` on `device`; returns `true` when every step ran to its end, `false`
    /// when the step window closed before a step or the run cancelled a step's work.
    package func run(_ journey: Journey, on device: VirtualDevice, intendedStart: Double, rng: inout SeededRandom)
        async -> Bool
    {
        var due = intendedStart
        for step in journey.steps {
            if Task.isCancelled || !control.stepAllowed(at: timeline.now()) { return false }
            if case .wait(let seconds, let jitter) = step {
                due += seconds + (jitter > 0 ? rng.unit() * jitter : 0)
                guard await sleep(until: due) else { return false }
                continue
            }
            guard await perform(step, on: device, due: due) else { return false }
            due = timeline.now()
        }
        return !Task.isCancelled
    }

    /// `run:device:seq`, the `opl_corr` property that joins an event call with its ledger row.
    static func correlationId(runId: String, device: String, sequence: Int) -> String {
        var id = ""
        id.reserveCapacity(runId.utf8.count + device.utf8.count + 22)
        id += runId
        id += ":"
        id += device
        id += ":"
        id += String(sequence)
        return id
    }

    /// Sleeps on the injected clock until run time `target`, waking when the step window
    /// closes. Returns `false` when the window closed first or the task was cancelled.
    ///
    /// With a `pacer` (real time only: the run's clock is `ContinuousClock`), the wait is on the
    /// pacer's thread instead of the clock (``PacingExecutor/sleep(nanoseconds:)``).
    func sleep(until target: Double, pacer: PacingExecutor? = nil) async -> Bool {
        while true {
            if Task.isCancelled { return false }
            let now = timeline.now()
            if !control.stepAllowed(at: now) { return false }
            if target <= now { return true }
            // Wake at the target or the window's end, and at least every 0.25 s to see a stop.
            let wake = Swift.min(target, control.windowEnd, now + 0.25)
            if let pacer, await pacer.sleep(nanoseconds: RunTimeline.waitNanoseconds(wake - now)) {
                continue
            }
            do {
                try await clock.sleep(for: RunTimeline.wait(wake - now), tolerance: nil)
            } catch {
                return false
            }
        }
    }

    /// Runs one step; returns `false` when the run cut it short (window closed between its
    /// calls, cutoff reached, task cancelled). Like ``call(_:due:_:)`` it runs on its caller's
    /// executor (the journey's, a client loop), without a hop on entry.
    nonisolated(nonsending) func perform(_ step: JourneyStep, on device: VirtualDevice, due: Double) async -> Bool {
        switch step {
        case .click(let link, let org):
            return await click(link: link, org: org ?? sdk.orgKey, device: device)
        case .firstLaunch:
            return await launch(device, fresh: true, due: due)
        case .relaunch:
            return await launch(device, fresh: false, due: due)
        case .open(let link, let style, let timeout):
            return await open(link: link, style: style, timeout: timeout, device: device, due: due)
        case .event(let name, let properties, let count):
            for index in 0..<count {
                // Each repetition is a step of its own: none starts once the window has closed.
                if index > 0, !control.stepAllowed(at: timeline.now()) { return false }
                let sequence = device.nextSequence()
                // Sized for the correlation id too, and the id built in one buffer: one allocation each.
                var props = [String: String](minimumCapacity: properties.count + 1)
                for (key, value) in properties { props[key] = expand(value, device: device, sequence: sequence) }
                props["opl_corr"] = Self.correlationId(runId: runId, device: device.id, sequence: sequence)
                let eventName = expand(name, device: device, sequence: sequence)
                let sent = props
                let done = await call(device, due: index == 0 ? due : nil) {
                    try await $0.trackEvent(name: eventName, properties: sent)
                }
                if !done { return false }
            }
            return true
        case .identify(let externalId):
            let id = expand(externalId, device: device, sequence: device.nextSequence())
            return await call(device, due: due) { try await $0.setIdentity(externalId: id) }
        case .clearIdentity:
            return await call(device, due: due) { try await $0.clearIdentity() }
        case .wait:
            return true
        }
    }

    /// Replaces `{device}`, `{seq}`, `{run}`, `{org}` in profile strings.
    func expand(_ text: String, device: VirtualDevice, sequence: Int) -> String {
        // A byte scan: `String.contains(String)` goes through Foundation's locale-aware search.
        guard text.utf8.contains(UInt8(ascii: "{")) else { return text }
        return text.replacingOccurrences(of: "{device}", with: device.id)
            .replacingOccurrences(of: "{seq}", with: String(sequence))
            .replacingOccurrences(of: "{run}", with: runId)
            .replacingOccurrences(of: "{org}", with: sdk.orgKey)
    }

    // MARK: Steps

    func click(link: String, org: String, device: VirtualDevice) async -> Bool {
        guard control.attemptAllowed(at: timeline.now()) else { return false }
        let url = baseURL.appendingPathComponent(org).appendingPathComponent(link)
        var headers = [
            "User-Agent": device.userAgent, "Accept-Language": "\(device.info.language),en;q=0.8",
            "Accept": "text/html",
        ]
        if device.bindsSource {
            // The browser leaves from the device's address too: only the native transport can bind it.
            headers[SourceAddressField.name] = device.clientIP
            if forwardsSourceAddress { headers["X-Forwarded-For"] = device.clientIP }
        } else {
            headers["X-Forwarded-For"] = device.clientIP
        }
        for header in extraHeaders { headers[header.name] = header.value }
        let start = timeline.now()
        var status: Int?
        var placed = false
        if let (data, code) = await browse(url, headers: headers, bound: device.bindsSource || browsesOverTransport) {
            status = code
            if status == 200, let payload = ClickPage.clipboardPayload(in: String(decoding: data, as: UTF8.self)) {
                device.state.withLock { $0.clickedLinkId = linkIds["\(org)/\(link)"] ?? link }
                if device.clipboardSurvives {
                    device.pasteboard.set(payload)
                    placed = true
                }
            }
        }
        if Task.isCancelled { return false }
        recorder.clickRecorded(status: status, latency: timeline.now() - start, clipboardPlaced: placed)
        return true
    }

    /// A browser's `GET url`: through the URLSession, or through the run's transport for a device
    /// bound to a source address (the native transport binds it) and for an `https://` backend
    /// (the transport's TLS settings, `--cacert` included, hold). `nil` when no response arrived.
    private var browsesOverTransport: Bool { baseURL.scheme?.lowercased() == "https" }

    private func browse(_ url: URL, headers: [String: String], bound: Bool) async -> (Data, Int)? {
        let timeout = Swift.max(1, sdk.timeout.rounded(.up))
        if bound {
            let context = OptoLinkRequestContext(endpoint: .data, callId: 0, attempt: 1, timeout: .seconds(timeout))
            let request = OptoLinkHTTPRequest(method: "GET", url: url, headers: headers)
            guard let response = try? await transport.send(request, context: context) else { return nil }
            return (response.body, response.status)
        }
        var request = URLRequest(url: url)
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        request.timeoutInterval = timeout
        guard let (data, response) = try? await session.optoLinkData(for: request),
            let status = (response as? HTTPURLResponse)?.statusCode
        else { return nil }
        return (data, status)
    }

    func launch(_ device: VirtualDevice, fresh: Bool, due: Double) async -> Bool {
        let (previousLaunch, previous, launch) = device.state.withLock { s -> (DeviceLaunch, OptoLink?, Int) in
            let old = (DeviceLaunch(device: device.id, launch: s.launch), s.instance)
            s.launch += 1
            s.instance = nil
            s.lastLink = nil
            return (old.0, old.1, s.launch)
        }
        if let previous {
            previous.dispose()
            recorder.closeCalls(previousLaunch, callIds: nil, outcome: nil)
        }
        if fresh { device.store.removeAll() }
        let deviceLaunch = DeviceLaunch(device: device.id, launch: launch)
        let config = OptoLinkConfig(
            apiKey: sdk.apiKey, orgKey: sdk.orgKey, baseUrl: baseURL, timeout: sdk.timeout, maxRetries: sdk.maxRetries,
            routeCache: device.routeCache)
        let attempts = DeviceAttemptMiddleware(
            cutoff: RunCutoff(control: control, timeline: timeline),
            forwardedFor: device.bindsSource && !forwardsSourceAddress
                ? nil : ForwardedForMiddleware(clientIP: device.clientIP),
            sourceAddress: device.bindsSource ? device.clientIP : nil,
            extraHeaders: extraHeaders.isEmpty ? nil : ExtraHeadersMiddleware(headers: extraHeaders))
        let middlewares: [any OptoLinkMiddleware] = [attempts, recorder]
        let environment = OptoLinkEnvironment(
            store: device.store, pasteboard: device.pasteboard, deviceInfo: device.info,
            transport: transport(for: device), middlewares: middlewares, clock: sdkClock,
            retryPolicy: retryPolicy, label: deviceLaunch.label)
        let instance = OptoLink(config: config, environment: environment)
        device.state.withLock { $0.instance = instance }
        recorder.deviceIdRecorded(device: device.id, launch: launch, deviceId: instance.deviceId)
        let context = StepContext(intendedStart: due)
        await StepContext.$current.withValue(context) { await instance.start() }
        // start() never throws: a cancelled journey task means the run cut the launch.
        let cut = Task.isCancelled
        recorder.closeCalls(deviceLaunch, callIds: context.callIds, outcome: cut ? CallOutcome.cancelledByRun : nil)
        if cut { return false }
        guard fresh else { return true }
        // The deferred match emits before start() returns: its link, if any, is the last one.
        let deferred = instance.lastLink
        let clicked = device.state.withLock { s -> String? in
            s.lastLink = deferred
            defer { s.clickedLinkId = nil }
            return s.clickedLinkId
        }
        recorder.deferredMatchRecorded(
            AttributionRecord(
                device: device.id, clickedLinkId: clicked, emittedLinkId: deferred?.linkId,
                matchMethod: deferred?.matchMethod.rawValue, sharedNAT: device.sharedNAT))
        return true
    }

    func open(link: String, style: JourneyStep.OpenStyle, timeout: Double, device: VirtualDevice, due: Double) async
        -> Bool
    {
        let (instance, hadLink) = device.state.withLock { ($0.instance, $0.lastLink != nil) }
        guard let instance else { return true }
        let url: URL?
        switch style {
        case .universal:
            var components = URLComponents()
            components.scheme = "https"
            components.host = sdk.universalLinkHost ?? baseURL.host
            if sdk.universalLinkHost == nil { components.port = baseURL.port }
            components.path = "/\(sdk.orgKey)/\(link)"
            url = components.url
        case .custom:
            url = URL(string: "\(sdk.customScheme)://\(link)")
        }
        guard let url else { return true }
        let stream = instance.links
        let context = StepContext(intendedStart: due)
        let start = timeline.now()
        StepContext.$current.withValue(context) { instance.handle(url: url) }
        // The wait for the link ends at the cutoff at the latest; an open cut there is not a time-out.
        let remaining = control.cutoff - start
        let emitted = await firstLink(
            of: stream, within: Swift.min(timeout, Swift.max(0, remaining)), skipFirst: hadLink)
        let cut = emitted == nil && (remaining < timeout || Task.isCancelled)
        recorder.openRecorded(
            OpenRecord(
                start: start, latency: timeline.now() - start, outcome: OpenOutcome(emitted, cut: cut),
                universal: style == .universal, routeCache: device.routeCache))
        if cut { return false }
        if let emitted { device.state.withLock { $0.lastLink = emitted } }
        return true
    }

    /// Runs one public telemetry call inside a step context and closes its calls with the
    /// outcome the public API reported. Returns `false` when the run cancelled the call.
    nonisolated(nonsending) func call(
        _ device: VirtualDevice, due: Double?, _ body: @Sendable (OptoLink) async throws -> Void
    ) async -> Bool {
        let (instance, launch) = device.state.withLock {
            ($0.instance, DeviceLaunch(device: device.id, launch: $0.launch))
        }
        guard let instance else { return true }
        let context = StepContext(intendedStart: due)
        let outcome: CallOutcome = await StepContext.$current.withValue(context) {
            do {
                try await body(instance)
                return CallOutcome.ok
            } catch is OptoLinkApiError {
                return CallOutcome.apiError
            } catch let error as OptoLinkConnectionError where error.underlying.code == .cancelled {
                // The run stopped the call (grace deadline, Ctrl-C), e.g. during a back-off sleep.
                return CallOutcome.cancelledByRun
            } catch is OptoLinkConnectionError {
                return CallOutcome.connectionError
            } catch {
                return CallOutcome.otherError
            }
        }
        recorder.closeCalls(launch, callIds: context.callIds, outcome: outcome)
        return outcome != CallOutcome.cancelledByRun && !Task.isCancelled
    }

    /// The first link `stream` yields within `seconds` (after skipping the replayed one when
    /// `skipFirst`), or `nil`.
    func firstLink(of stream: AsyncStream<OptoLinkData>, within seconds: Double, skipFirst: Bool) async
        -> OptoLinkData?
    {
        let clock = self.clock
        return await withTaskGroup(of: OptoLinkData?.self) { group in
            group.addTask {
                var skip = skipFirst
                for await link in stream {
                    if skip {
                        skip = false
                        continue
                    }
                    return link
                }
                return nil
            }
            group.addTask {
                try? await clock.sleep(for: .nanoseconds(Int64(seconds * 1e9)), tolerance: nil)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// Ends a device's current launch (disposes the instance, closes its calls).
    package func endLaunch(of device: VirtualDevice) {
        let (launch, instance) = device.state.withLock { s -> (DeviceLaunch, OptoLink?) in
            defer { s.instance = nil }
            return (DeviceLaunch(device: device.id, launch: s.launch), s.instance)
        }
        guard let instance else { return }
        instance.dispose()
        recorder.closeCalls(launch, callIds: nil, outcome: nil)
    }
}
