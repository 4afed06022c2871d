import Foundation
import OptoLink
import OptoLinkTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The opt-in route cache (``OptoLinkConfig/routeCache``): the second fallback layer of a
/// Universal Link open whose `/data` resolution fails. Back-off sleeps run on a
/// `RecordingClock` (instant); route ages run on a `ManualClock` used as the wall clock.
@Suite(.timeLimit(.minutes(1)))
struct RouteCacheTests {
    static let link = URL(string: "https://links.acme.test/acme/welcome")!
    static let welcome = #"{"linkId":"lnk_welcome","path":"/welcome","params":{"campaign":"spring"}}"#
    static let refused = StubTransport.Reply.error(URLError(.cannotConnectToHost))
    static let day: Duration = .seconds(24 * 3600)

    /// One launched device: a store that survives relaunches, a stub backend, a wall clock.
    final class Device: Sendable {
        let transport = StubTransport()
        let store = Fixture.launchedStore()
        let wall = ManualClock()
        let recording = RecordingClock()

        func launch(cache: Bool = true, maxEntries: Int = 100, maxAge: TimeInterval? = nil) async -> OptoLink {
            var config = Fixture.config()
            config.routeCache = cache
            config.routeCacheMaxEntries = maxEntries
            if let maxAge { config.routeCacheMaxAge = maxAge }
            var environment = Fixture.environment(transport, clock: recording, store: store)
            environment.wallClock = wall.wallClock()
            let sdk = OptoLink(config: config, environment: environment)
            await sdk.start()
            return sdk
        }

        /// Hands `url` to the SDK with `replies` scripted for its `/data` call and returns the
        /// one link emitted for it.
        func open(
            _ sdk: OptoLink, _ url: URL = RouteCacheTests.link, replies: [StubTransport.Reply]
        ) async throws -> OptoLinkData {
            transport.enqueue(replies, for: .data)
            let before = transport.requests(for: .data).count
            sdk.handle(url: url)
            await sdk.waitForBackgroundWork()
            #expect(transport.requests(for: .data).count == before + replies.count, "every scripted reply was used")
            var links = sdk.links.makeAsyncIterator()
            return try #require(await links.next())
        }

        /// Three refused attempts: the whole budget of one `/data` call.
        func outage(_ sdk: OptoLink, _ url: URL = RouteCacheTests.link) async throws -> OptoLinkData {
            try await open(sdk, url, replies: Array(repeating: RouteCacheTests.refused, count: 3))
        }
    }

    static func ok(_ code: String) -> StubTransport.Reply {
        .status(200, #"{"linkId":"lnk_\#(code)","path":"/\#(code)","params":null}"#)
    }

    static func url(_ code: String, host: String = "links.acme.test", query: String? = nil) -> URL {
        URL(string: "https://\(host)/acme/\(code)" + (query.map { "?\($0)" } ?? ""))!
    }

    // MARK: hit and miss

    @Test func aFailedResolutionServesTheRouteCachedFromAnEarlierSuccess() async throws {
        let device = Device()
        let sdk = await device.launch()
        let fresh = try await device.open(sdk, replies: [.status(200, Self.welcome)])
        #expect(fresh.source == .resolved && fresh.linkId == "lnk_welcome")

        let cached = try await device.outage(sdk)
        #expect(
            cached
                == OptoLinkData(
                    linkId: "lnk_welcome", path: "/welcome", params: ["campaign": "spring"], matchMethod: .direct,
                    confidence: .exact, isDeferred: false, score: nil, source: .cached))
        #expect(cached != fresh, "a cached route is told apart from a fresh one")
    }

    /// Each failure that says nothing about the link itself falls back to the cache: a timeout,
    /// 5xx statuses, a proxy's HTML 502, a 429 after the retries and a malformed 200 body.
    @Test(arguments: [
        ("timeout", [StubTransport.Reply.hang, .hang, .hang]),
        ("503", Array(repeating: StubTransport.Reply.status(503, Fixture.serverError), count: 3)),
        ("500", Array(repeating: StubTransport.Reply.status(500, Fixture.serverError), count: 3)),
        ("html 502", Array(repeating: StubTransport.Reply.status(502, Fixture.nginx502), count: 3)),
        ("429", Array(repeating: StubTransport.Reply.status(429, Fixture.rateLimited("1 second")), count: 3)),
        ("reset", Array(repeating: StubTransport.Reply.error(URLError(.networkConnectionLost)), count: 3)),
        ("malformed 200", [StubTransport.Reply.status(200, "{\"linkId\":7}")]),
    ])
    func transientFailuresFallBackToTheCache(_ name: String, replies: [StubTransport.Reply]) async throws {
        let device = Device()
        // The cache is warmed on a clock whose deadlines never expire: on one where every
        // attempt's deadline expires at once, the warming 200 would race its own deadline.
        var sdk = await device.launch()
        _ = try await device.open(sdk, replies: [.status(200, Self.welcome)])
        if name == "timeout" {
            // A relaunch over the same store, on a clock where every attempt's deadline expires
            // at once: the hangs are cut by their deadlines, and the cache the first launch wrote answers.
            sdk.dispose()
            var config = Fixture.config()
            config.routeCache = true
            var environment = Fixture.environment(
                device.transport, clock: RecordingClock(attemptDeadlines: .expireEveryAttempt), store: device.store)
            environment.wallClock = device.wall.wallClock()
            sdk = OptoLink(config: config, environment: environment)
            await sdk.start()
        }
        let link = try await device.open(sdk, replies: replies)
        #expect(link.source == .cached, "\(name)")
        #expect(link.linkId == "lnk_welcome" && link.path == "/welcome")
    }

    @Test func aLinkNeverResolvedBeforeIsEmittedRaw() async throws {
        let device = Device()
        let sdk = await device.launch()
        _ = try await device.open(sdk, replies: [.status(200, Self.welcome)])
        let other = Self.url("promo", query: "ref=push")
        let link = try await device.outage(sdk, other)
        #expect(link == IncomingRaw.data(path: "/acme/promo", params: ["ref": "push"]))
        #expect(link.source == .raw)
    }

    /// The key is host + path + query: the same short code on another host, or with another
    /// query, is a different entry.
    @Test func theKeyIsHostPathAndQuery() async throws {
        let device = Device()
        let sdk = await device.launch()
        _ = try await device.open(sdk, Self.url("welcome", query: "screen=a"), replies: [Self.ok("a")])
        #expect(try await device.outage(sdk, Self.url("welcome", query: "screen=b")).source == .raw)
        #expect(
            try await device.outage(sdk, Self.url("welcome", host: "go.acme.test", query: "screen=a")).source == .raw)
        #expect(try await device.outage(sdk, Self.url("welcome")).source == .raw)
        let hit = try await device.outage(sdk, Self.url("welcome", host: "LINKS.acme.test", query: "screen=a"))
        #expect(hit.source == .cached && hit.linkId == "lnk_a", "host names are case-insensitive")
    }

    @Test func offByDefaultTheContractsRawLinkAndNothingStored() async throws {
        let device = Device()
        let sdk = await device.launch(cache: false)
        #expect(OptoLinkConfig(apiKey: Fixture.apiKey, orgKey: "acme", baseUrl: Fixture.baseUrl).routeCache == false)
        _ = try await device.open(sdk, replies: [.status(200, Self.welcome)])
        let link = try await device.outage(sdk)
        #expect(link.source == .raw && link.linkId == nil && link.path == "/acme/welcome")
        #expect(device.store.string(forKey: "routeCache") == nil)
    }

    // MARK: age

    @Test func aRouteIsServedUpToItsMaximumAgeAndNotAfter() async throws {
        let device = Device()
        let sdk = await device.launch()
        _ = try await device.open(sdk, replies: [.status(200, Self.welcome)])
        device.wall.advance(by: Self.day * 30)
        #expect(try await device.outage(sdk).source == .cached, "exactly 30 days old: still served")
        device.wall.advance(by: .seconds(1))
        #expect(try await device.outage(sdk).source == .raw, "30 days and 1 s: stale")
        #expect(device.store.string(forKey: "routeCache") == nil, "the stale entry is deleted")
    }

    @Test func aConfiguredMaximumAgeApplies() async throws {
        let device = Device()
        let sdk = await device.launch(maxAge: 3600)
        _ = try await device.open(sdk, replies: [.status(200, Self.welcome)])
        device.wall.advance(by: .seconds(3601))
        #expect(try await device.outage(sdk).source == .raw)
    }

    /// Another input of the stale kind: an entry dated well after "now" (the wall clock was
    /// set back) cannot be aged, so it is not served.
    @Test func anEntryFromTheFutureIsNotTrusted() async throws {
        let device = Device()
        let sdk = await device.launch()
        let later = device.wall.wallClock(startingAt: Date(timeIntervalSince1970: 1_789_862_400 + 600))
        var config = Fixture.config()
        config.routeCache = true
        var environment = Fixture.environment(device.transport, clock: device.recording, store: device.store)
        environment.wallClock = later
        let writer = OptoLink(config: config, environment: environment)
        await writer.start()
        _ = try await device.open(writer, replies: [.status(200, Self.welcome)])
        writer.dispose()
        #expect(try await device.outage(sdk).source == .raw, "stored 10 minutes in this clock's future")
    }

    /// A refreshing success restarts the age.
    @Test func aNewSuccessRefreshesTheEntry() async throws {
        let device = Device()
        let sdk = await device.launch()
        _ = try await device.open(sdk, replies: [Self.ok("old")])
        device.wall.advance(by: Self.day * 20)
        _ = try await device.open(sdk, replies: [.status(200, Self.welcome)])
        device.wall.advance(by: Self.day * 20)
        let link = try await device.outage(sdk)
        #expect(link.source == .cached && link.linkId == "lnk_welcome", "the newer route, aged 20 days")
    }

    // MARK: eviction

    @Test(arguments: [404, 410])
    func goneOrExpiredLinksEvictTheEntryAndAreNeverReplacedByIt(_ status: Int) async throws {
        let device = Device()
        let sdk = await device.launch()
        _ = try await device.open(sdk, replies: [.status(200, Self.welcome)])
        let body =
            status == 404 ? Fixture.notFoundEnvelope : #"{"statusCode":410,"error":"Gone","message":"Link expired"}"#
        let gone = try await device.open(sdk, replies: [.status(status, body)])
        #expect(gone.source == .raw && gone.linkId == nil)
        #expect(device.store.string(forKey: "routeCache") == nil)
        #expect(try await device.outage(sdk).source == .raw, "the entry is gone for later outages too")
    }

    /// Another client error (a revoked key) is no outage: raw, but the route stays cached.
    @Test func otherClientErrorsEmitRawAndKeepTheEntry() async throws {
        let device = Device()
        let sdk = await device.launch()
        _ = try await device.open(sdk, replies: [.status(200, Self.welcome)])
        #expect(try await device.open(sdk, replies: [.status(401, Fixture.unauthorized)]).source == .raw)
        #expect(try await device.outage(sdk).source == .cached)
    }

    @Test func theBoundEvictsTheLeastRecentlyUsedRoute() async throws {
        let device = Device()
        let sdk = await device.launch(maxEntries: 2)
        _ = try await device.open(sdk, Self.url("a"), replies: [Self.ok("a")])
        _ = try await device.open(sdk, Self.url("b"), replies: [Self.ok("b")])
        // Serving "a" from the cache makes "b" the least recently used.
        #expect(try await device.outage(sdk, Self.url("a")).source == .cached)
        _ = try await device.open(sdk, Self.url("c"), replies: [Self.ok("c")])
        #expect(try await device.outage(sdk, Self.url("b")).source == .raw, "b was evicted")
        #expect(try await device.outage(sdk, Self.url("a")).linkId == "lnk_a")
        #expect(try await device.outage(sdk, Self.url("c")).linkId == "lnk_c")
    }

    @Test func aBoundOfZeroKeepsNothing() async throws {
        let device = Device()
        let sdk = await device.launch(maxEntries: 0)
        _ = try await device.open(sdk, replies: [.status(200, Self.welcome)])
        #expect(try await device.outage(sdk).source == .raw)
        #expect(device.store.string(forKey: "routeCache") == nil)
    }

    // MARK: relaunch and reinstall

    @Test func aRelaunchOnTheSameStoreFindsTheRoute() async throws {
        let device = Device()
        let first = await device.launch()
        _ = try await device.open(first, replies: [.status(200, Self.welcome)])
        first.dispose()
        device.wall.advance(by: Self.day * 3)
        let second = await device.launch()
        let link = try await device.outage(second)
        #expect(link.source == .cached && link.path == "/welcome")
        second.dispose()
        let third = await device.launch(cache: false)
        #expect(try await device.outage(third).source == .raw, "a launch with the cache off never serves it")
    }

    @Test func aReinstallForgetsEveryRoute() async throws {
        let device = Device()
        let first = await device.launch()
        _ = try await device.open(first, replies: [.status(200, Self.welcome)])
        first.dispose()
        device.store.removeAll()
        device.store.setBool(true, forKey: "firstLaunchDone")
        let second = await device.launch()
        #expect(try await device.outage(second).source == .raw)
    }

    @Test func anUnreadableStoredCacheStartsEmpty() async throws {
        let device = Device()
        device.store.setString("{not json", forKey: "routeCache")
        let sdk = await device.launch()
        #expect(try await device.outage(sdk).source == .raw)
        _ = try await device.open(sdk, replies: [.status(200, Self.welcome)])
        #expect(try await device.outage(sdk).source == .cached, "the next success overwrites it")
    }

    // MARK: never attribution

    /// The deferred match neither stores nor serves routes: its failure emits nothing (a failed
    /// background check must never navigate), and a cached open is never `isDeferred`.
    @Test func theDeferredMatchNeverUsesTheCache() async throws {
        let transport = StubTransport()
        transport.enqueue([.status(201, Fixture.hitLowercaseBody)], for: .match)
        let store = InMemoryKeyValueStore()
        var config = Fixture.config()
        config.routeCache = true
        let sdk = OptoLink(config: config, environment: Fixture.environment(transport, store: store))
        await sdk.start()
        var links = sdk.links.makeAsyncIterator()
        let deferred = try #require(await links.next())
        #expect(deferred.source == .deferred && deferred.isDeferred)
        #expect(store.string(forKey: "routeCache") == nil, "a deferred hit is not a route to cache")

        transport.setDefault(Self.refused, for: .match)
        await #expect(throws: OptoLinkConnectionError.self) { _ = try await sdk.resolveDeferredLink() }
        var replay = sdk.links.makeAsyncIterator()
        #expect(await replay.next() == deferred, "a failed re-check emitted nothing")
    }

    @Test func aCachedRouteIsNeverAnAttributionResult() async throws {
        let device = Device()
        let sdk = await device.launch()
        _ = try await device.open(sdk, replies: [.status(200, Self.welcome)])
        let cached = try await device.outage(sdk)
        #expect(cached.source == .cached)
        #expect(
            !cached.isDeferred && cached.matchMethod == .direct && cached.confidence == .exact && cached.score == nil)
    }

    // MARK: public surface

    @Test func sourceRoundTripsAndIsDerivedFromOlderJSON() throws {
        let cached = OptoLinkData(
            linkId: "l", path: "/p", params: nil, matchMethod: .direct, confidence: .exact, isDeferred: false,
            source: .cached)
        let data = try JSONEncoder().encode(cached)
        #expect(try JSONDecoder().decode(OptoLinkData.self, from: data) == cached)
        let older = #"{"linkId":"l","path":"/p","matchMethod":"DIRECT","confidence":"EXACT","isDeferred":false}"#
        #expect(try JSONDecoder().decode(OptoLinkData.self, from: Data(older.utf8)).source == .resolved)
        let raw = #"{"path":"/p","matchMethod":"DIRECT","confidence":"EXACT","isDeferred":false}"#
        #expect(try JSONDecoder().decode(OptoLinkData.self, from: Data(raw.utf8)).source == .raw)
        let deferred = #"{"linkId":"l","path":"/p","matchMethod":"CLIPBOARD","confidence":"EXACT","isDeferred":true}"#
        #expect(try JSONDecoder().decode(OptoLinkData.self, from: Data(deferred.utf8)).source == .deferred)
    }

    /// The seed's three-argument initialiser keeps its defaults; the additive one takes every
    /// settable field and defaults each to the same value.
    @Test func theFullInitialiserDefaultsMatchTheSeedInitialiser() {
        let seed = OptoLinkConfig(apiKey: Fixture.apiKey, orgKey: "acme", baseUrl: Fixture.baseUrl)
        let full = OptoLinkConfig(apiKey: Fixture.apiKey, orgKey: "acme", baseUrl: Fixture.baseUrl, timeout: 10)
        for config in [seed, full] {
            #expect(config.timeout == 10 && config.maxRetries == 2 && config.clipboardEnabled && config.logger == nil)
            #expect(!config.routeCache && config.routeCacheMaxAge == 30 * 24 * 3600)
            #expect(config.routeCacheMaxEntries == 100)
        }
        let logger = RecordingLogger()
        let custom = OptoLinkConfig(
            apiKey: Fixture.apiKey, orgKey: "other", baseUrl: Fixture.baseUrl, timeout: 3, maxRetries: 0,
            clipboardEnabled: false, logger: logger, routeCache: true, routeCacheMaxAge: 60, routeCacheMaxEntries: 5)
        #expect(custom.orgKey == "other" && custom.timeout == 3 && custom.maxRetries == 0 && !custom.clipboardEnabled)
        #expect(custom.logger != nil && custom.routeCache && custom.routeCacheMaxAge == 60)
        #expect(custom.routeCacheMaxEntries == 5)
    }
}

/// The raw emission for an unresolved Universal Link, written out.
enum IncomingRaw {
    static func data(path: String, params: [String: String]?) -> OptoLinkData {
        OptoLinkData(
            linkId: nil, path: path, params: params, matchMethod: .direct, confidence: .exact, isDeferred: false)
    }
}
