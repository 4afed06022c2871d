import Foundation
import OptoLink
import OptoLinkStaging
import OptoLinkTestSupport
import Testing

/// Each fault mode as the SDK observes it (docs/CONTRACT.md §2 retry matrix against §4 faults).
@Suite(.timeLimit(.minutes(1))) struct SDKFaultIntegrationTests {
    /// A started device (its session landed) and the emulator with `rule` on `endpoint`.
    func startedDevice(_ e: SDKHarness, maxRetries: Int = 2, timeout: TimeInterval = 5) async -> SDKHarness.Device {
        let device = e.device(maxRetries: maxRetries, timeout: timeout)
        await device.sdk.start()
        await device.sdk.waitForBackgroundWork()
        return device
    }

    func events(_ e: SDKHarness) -> [StagingLedgerEntry] { e.server.ledger().filter { $0.endpoint == "events" } }

    @Test func html502AfterCommitOnAnEventIsThrownOnceWithTheHtml() async throws {
        try await withEmulator { e in
            let device = await startedDevice(e)
            e.server.setFaults(StagingFaults(endpoints: ["events": [StagingFaultRule(kind: .html502, rate: 1)]]))
            let error = try #require(
                await apiError { try await device.sdk.trackEvent(name: "paid", properties: ["opl_corr": "r:1:1"]) })
            #expect(error.status == 502)
            #expect(error.raw == String(decoding: FaultResponses.nginx502, as: UTF8.self))
            #expect(error.message == nil)
            #expect(device.attempts.of(.events).count == 1)
            let landed = events(e)
            #expect(landed.count == 1)
            #expect(landed.first?.faultAfterCommit == "html_502")
            #expect(landed.first?.properties?["opl_corr"] == "r:1:1")
        }
    }

    @Test func jsonAndEmpty5xxAfterCommitAreNotRetriedForTelemetry() async throws {
        try await withEmulator { e in
            let device = await startedDevice(e)
            e.server.setFaults(
                StagingFaults(endpoints: [
                    "events": [StagingFaultRule(kind: .errorAfterCommit, rate: 1)],
                    "identity": [StagingFaultRule(kind: .empty5xx, rate: 1)],
                ]))
            let json = try #require(await apiError { try await device.sdk.trackEvent(name: "x") })
            #expect(json.status == 500)
            #expect(json.message == "Internal server error")
            let empty = try #require(await apiError { try await device.sdk.setIdentity(externalId: "u") })
            #expect(empty.status == 503)
            #expect(empty.raw == "" || empty.raw == nil)
            #expect(device.attempts.all.filter { $0.endpoint == .events || $0.endpoint == .identity }.count == 2)
            #expect(e.server.ledger().map(\.endpoint) == ["session", "events", "identity"])
        }
    }

    @Test func matchRetries5xxBeforeCommitAndKeepsTheClick() async throws {
        try await withEmulator { e in
            _ = try await e.click()
            e.server.setFaults(
                StagingFaults(endpoints: ["match": [StagingFaultRule(kind: .errorBeforeCommit, rate: 1)]]))
            let device = e.device(maxRetries: 2)
            let error = try #require(await apiError { _ = try await device.sdk.resolveDeferredLink() })
            #expect(error.status == 503)
            #expect(device.attempts.of(.match).map(\.status) == [503, 503, 503])
            e.server.setFaults(.none)
            #expect(try await device.sdk.resolveDeferredLink()?.matchMethod == .fingerprintExact)
        }
    }

    @Test func matchFailingAfterCommitLosesTheClickToTheRetry() async throws {
        try await withEmulator { e in
            _ = try await e.click()
            e.server.setFaults(
                StagingFaults(endpoints: ["match": [StagingFaultRule(kind: .errorAfterCommit, rate: 1)]]))
            let device = e.device(maxRetries: 1)
            // The first attempt consumed the click before failing; nothing is left for later calls.
            let first = await apiError { _ = try await device.sdk.resolveDeferredLink() }
            #expect(first?.status == 500)
            #expect(device.attempts.of(.match).map(\.status) == [500, 500])
            e.server.setFaults(.none)
            #expect(try await device.sdk.resolveDeferredLink() == nil)
            #expect(e.server.counters().faultCount("match", .errorAfterCommit) == 2)
        }
    }

    @Test func resetBeforeCommitIsAConnectionErrorRetriedWithoutWrites() async throws {
        try await withEmulator { e in
            let device = await startedDevice(e, maxRetries: 2)
            e.server.setFaults(StagingFaults(endpoints: ["events": [StagingFaultRule(kind: .reset, rate: 1)]]))
            do {
                try await device.sdk.trackEvent(name: "x")
                Issue.record("expected a connection error")
            } catch is OptoLinkConnectionError {}
            #expect(device.attempts.of(.events).map(\.status) == [nil, nil, nil])
            #expect(events(e).isEmpty)
            #expect(e.server.counters().count("events", status: "reset") == 3)
        }
    }

    @Test func resetAfterCommitDoubleCountsWhatTheClientRetries() async throws {
        try await withEmulator { e in
            let device = await startedDevice(e, maxRetries: 1)
            e.server.setFaults(
                StagingFaults(endpoints: ["events": [StagingFaultRule(kind: .reset, rate: 1, afterCommit: true)]]))
            await #expect(throws: OptoLinkConnectionError.self) { try await device.sdk.trackEvent(name: "twice") }
            #expect(device.attempts.of(.events).count == 2)
            #expect(events(e).map(\.faultAfterCommit) == ["reset", "reset"])
        }
    }

    @Test func latencyPastTheClientTimeoutCommitsTheWrite() async throws {
        try await withEmulator { e in
            let device = e.device(maxRetries: 0, timeout: 1, clock: OptoLinkSystemClock())
            await device.sdk.start()
            await device.sdk.waitForBackgroundWork()
            e.server.setFaults(
                StagingFaults(endpoints: ["events": [StagingFaultRule(kind: .latency, rate: 1, delaySeconds: 2)]]))
            do {
                try await device.sdk.trackEvent(name: "slow")
                Issue.record("expected a timeout")
            } catch let error as OptoLinkConnectionError {
                #expect(error.underlying.code == .timedOut)
            }
            #expect(events(e).map(\.faultAfterCommit) == ["latency"])
        }
    }

    @Test func faultsChangeWhileRunningThroughTheAdminRoute() async throws {
        try await withEmulator { e in
            let device = await startedDevice(e, maxRetries: 0)
            let put = try await e.fetch(
                "PUT", "/__admin/faults",
                body: Data(
                    #"{"seed":1,"endpoints":{"events":[{"kind":"error_before_commit","rate":1,"status":502}]}}"#.utf8))
            #expect(put.status == 200)
            #expect(await apiError { try await device.sdk.trackEvent(name: "x") }?.status == 502)
            #expect(try await e.fetch("PUT", "/__admin/faults", body: Data("{}".utf8)).status == 200)
            try await device.sdk.trackEvent(name: "y")
            #expect(events(e).map(\.eventName) == ["y"])
        }
    }

    /// An outage of `/data`, refused or reset, as the SDK sees it over real sockets: every
    /// attempt fails at once as a connection error, then a device with the route cache emits
    /// the route cached before the outage and a device without it the raw link.
    @Test func aRefusingDataOutageFallsBackToTheCachedRouteOrTheRawLink() async throws {
        try await dataOutage(.refuse)
    }

    @Test func aResettingDataOutageFallsBackToTheCachedRouteOrTheRawLink() async throws {
        try await dataOutage(.reset)
    }

    func dataOutage(_ mode: StagingOutageMode) async throws {
        try await withEmulator { e in
            let cached = e.device(routeCache: true)
            let plain = e.device()
            let url = try #require(URL(string: "https://links.acme.test/acme/welcome"))
            for device in [cached, plain] {
                await device.sdk.start()
                await device.sdk.waitForBackgroundWork()
                device.sdk.handle(url: url)
                await device.sdk.waitForBackgroundWork()
                #expect(await device.sdk.firstLink()?.source == .resolved)
            }
            let outage = StagingOutage(mode: mode, endpoints: ["data"], startSeconds: 0, endSeconds: 60)
            e.server.setFaults(StagingFaults(outages: [outage]))
            for device in [cached, plain] {
                device.sdk.handle(url: url)
                await device.sdk.waitForBackgroundWork()
            }
            let fallback = try #require(await cached.sdk.firstLink())
            #expect(fallback.source == .cached && fallback.linkId == "lnk_welcome" && fallback.path == "/welcome")
            let raw = try #require(await plain.sdk.firstLink())
            #expect(raw.source == .raw && raw.linkId == nil && raw.path == "/acme/welcome")
            for device in [cached, plain] {
                let statuses = device.attempts.of(.data).suffix(3).map(\.status)
                #expect(statuses == [nil, nil, nil], "3 attempts, no response")
            }
            let refused = e.server.counters().count("data", status: mode == .reset ? "reset" : "closed")
            #expect(refused >= 6, "libcurl may retry a dead reused connection once on its own")
            e.time.advance(60)
            cached.sdk.handle(url: url)
            await cached.sdk.waitForBackgroundWork()
            #expect(await cached.sdk.firstLink()?.source == .resolved, "after the window /data answers again")
        }
    }
}
