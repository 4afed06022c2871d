import Foundation
import OptoLink
import OptoLinkTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// docs/CONTRACT.md §2, "Orchestration", on isolated instances.
@Suite(.timeLimit(.minutes(1)))
struct OrchestrationTests {
    static let customSchemeURL = URL(string: "myapp://promo?code=SUMMER")!

    @Test func hundredConcurrentStartsSendOneMatch() async throws {
        let transport = StubTransport()
        let gate = Gate()
        transport.enqueue([.gated(gate, then: .status(201, Fixture.hitLowercaseBody))], for: .match)
        let sdk = OptoLink(config: Fixture.config(), environment: Fixture.environment(transport))
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<100 { group.addTask { await sdk.start() } }
            group.addTask {
                await transport.waitForRequests(1)
                gate.open()
            }
        }
        await sdk.waitForBackgroundWork()
        #expect(transport.requests(for: .match).count == 1)
        #expect(transport.requests(for: .session).isEmpty, "a hit sends no session call")
    }

    @Test func linkHandledDuringTheMatchIsEmittedAfterTheDeferredLink() async throws {
        let transport = StubTransport()
        let gate = Gate()
        transport.enqueue([.gated(gate, then: .status(201, Fixture.hitLowercaseBody))], for: .match)
        let sdk = OptoLink(config: Fixture.config(), environment: Fixture.environment(transport))
        var links = sdk.links.makeAsyncIterator()
        let start = Task { await sdk.start() }
        await transport.waitForRequests(1)
        sdk.handle(url: URL(string: "myapp://first")!)
        sdk.handle(url: Self.customSchemeURL)  // latest wins
        gate.open()
        await start.value

        let first = try #require(await links.next())
        let second = try #require(await links.next())
        #expect(first.isDeferred && first.linkId == "lnk_welcome")
        #expect(
            second
                == OptoLinkData(
                    linkId: nil, path: "", params: ["code": "SUMMER"], matchMethod: .direct, confidence: .exact,
                    isDeferred: false, score: nil))
        sdk.dispose()
        #expect(await links.next() == nil, "dispose finishes the streams")
    }

    @Test func parkedUniversalLinkResolvesAfterAMiss() async throws {
        let transport = StubTransport()
        let gate = Gate()
        transport.enqueue([.gated(gate, then: .status(201, Fixture.missBody))], for: .match)
        transport.enqueue(
            [.status(200, #"{"linkId":"lnk_welcome","path":"/welcome","params":{"campaign":"spring"}}"#)], for: .data)
        let sdk = OptoLink(config: Fixture.config(), environment: Fixture.environment(transport))
        let start = Task { await sdk.start() }
        await transport.waitForRequests(1)
        sdk.handle(url: Drive.universalLink)
        #expect(transport.requests(for: .data).isEmpty, "parked, not resolved, during the match")
        gate.open()
        await start.value
        var links = sdk.links.makeAsyncIterator()
        let link = try #require(await links.next())
        #expect(
            link
                == OptoLinkData(
                    linkId: "lnk_welcome", path: "/welcome", params: ["campaign": "spring"], matchMethod: .direct,
                    confidence: .exact, isDeferred: false, score: nil))
        await sdk.waitForBackgroundWork()
        // The session check-in (fire-and-forget) and the parked link's resolution run
        // concurrently, so their arrival order at the transport is free; the order of the
        // decisions is not: the miss starts the session (call 2) before the flush (call 3).
        let requests = transport.requests
        #expect(requests.count == 3)
        #expect(requests.first?.context.endpoint == .match)
        #expect(requests.first?.context.callId == 1)
        #expect(requests.first { $0.context.endpoint == .session }?.context.callId == 2)
        #expect(requests.first { $0.context.endpoint == .data }?.context.callId == 3)
    }

    @Test func secondLaunchOnTheSameStoreSendsNoMatch() async throws {
        let transport = StubTransport()
        let store = InMemoryKeyValueStore()
        let first = OptoLink(config: Fixture.config(), environment: Fixture.environment(transport, store: store))
        await first.start()
        await first.waitForBackgroundWork()
        let second = OptoLink(config: Fixture.config(), environment: Fixture.environment(transport, store: store))
        await second.start()
        await second.waitForBackgroundWork()
        #expect(second.deviceId == first.deviceId)
        #expect(transport.requests.map(\.context.endpoint) == [.match, .session, .session])
    }

    /// docs/CONTRACT.md §2: a malformed 2xx `/match` body is a network failure of the deferred
    /// match: logged, start-up proceeds (session fallback), nothing is emitted, and
    /// `resolveDeferredLink()` throws a connection error.
    @Test func malformedMatchBodyOnFirstLaunchIsANetworkFailure() async throws {
        let transport = StubTransport()
        transport.setDefault(.status(201, "<html>maintenance</html>"), for: .match)
        let logger = RecordingLogger()
        let sdk = OptoLink(config: Fixture.config(logger: logger), environment: Fixture.environment(transport))
        await sdk.start()
        await sdk.waitForBackgroundWork()
        #expect(transport.requests(for: .match).count == 1, "a 2xx is not retried")
        #expect(transport.requests(for: .session).count == 1, "failure → session fallback")
        #expect(sdk.lastLink == nil)
        #expect(
            logger.entries.contains {
                $0.level == .warning && $0.message.contains("deferred match failed") && $0.error != nil
            })
        #expect(logger.entries.contains { $0.message.contains("is not a match result") })
        let error = await #expect(throws: OptoLinkConnectionError.self) { try await sdk.resolveDeferredLink() }
        #expect(error?.underlying.code == .cannotParseResponse)
    }

    @Test func networkFailureOnFirstLaunchConsumesTheFlag() async throws {
        let transport = StubTransport()
        transport.setDefault(.error(URLError(.cannotConnectToHost)), for: .match)
        let store = InMemoryKeyValueStore()
        let logger = RecordingLogger()
        let sdk = OptoLink(
            config: Fixture.config(logger: logger), environment: Fixture.environment(transport, store: store))
        await sdk.start()  // never throws
        await sdk.waitForBackgroundWork()
        #expect(store.bool(forKey: "firstLaunchDone"))
        #expect(transport.requests(for: .match).count == 3)
        #expect(transport.requests(for: .session).count == 1, "failure → session fallback")
        #expect(logger.entries.contains { $0.level == .warning && $0.error != nil })
        await #expect(throws: OptoLinkConnectionError.self) { try await sdk.resolveDeferredLink() }

        let relaunch = OptoLink(config: Fixture.config(), environment: Fixture.environment(transport, store: store))
        await relaunch.start()
        #expect(transport.requests(for: .match).count == 6, "only resolveDeferredLink() re-ran the match")
    }

    @Test func clipboardIsClearedOnAHitOnly() async throws {
        for (body, cleared) in [(Fixture.hitLowercaseBody, true), (Fixture.missBody, false)] {
            let transport = StubTransport()
            transport.enqueue([.status(201, body)], for: .match)
            let pasteboard = InMemoryPasteboard("opl_tok123")
            let sdk = OptoLink(
                config: Fixture.config(), environment: Fixture.environment(transport, pasteboard: pasteboard))
            await sdk.start()
            #expect((pasteboard.string() == nil) == cleared)
            #expect(transport.requests(for: .match).first?.jsonBody?["clipboardToken"] as? String == "opl_tok123")
        }
    }

    @Test func clipboardLegDisabled() async throws {
        let transport = StubTransport()
        transport.enqueue([.status(201, Fixture.hitLowercaseBody)], for: .match)
        let pasteboard = InMemoryPasteboard("opl_tok123")
        let sdk = OptoLink(
            config: Fixture.config(clipboardEnabled: false),
            environment: Fixture.environment(transport, pasteboard: pasteboard))
        await sdk.start()
        #expect(pasteboard.string() == "opl_tok123")
        #expect(transport.requests(for: .match).first?.jsonBody?["clipboardToken"] == nil)
    }

    @Test func lateSubscriberGetsTheLastLinkOnce() async throws {
        let transport = StubTransport()
        let sdk = OptoLink(
            config: Fixture.config(), environment: Fixture.environment(transport, store: Fixture.launchedStore()))
        await sdk.start()
        sdk.handle(url: URL(string: "myapp://one")!)
        sdk.handle(url: URL(string: "myapp://two?x=1")!)
        var late = sdk.links.makeAsyncIterator()
        #expect(await late.next()?.params == ["x": "1"])
        sdk.handle(url: URL(string: "myapp://three?y=2")!)
        #expect(await late.next()?.params == ["y": "2"], "the replayed link is not delivered twice")
        var another = sdk.links.makeAsyncIterator()
        #expect(await another.next()?.params == ["y": "2"])
    }

    @Test func lastLinkHoldsTheDeferredLinkWhenStartReturns() async throws {
        let transport = StubTransport()
        transport.enqueue([.status(201, Fixture.hitLowercaseBody)], for: .match)
        let hit = OptoLink(config: Fixture.config(), environment: Fixture.environment(transport))
        #expect(hit.lastLink == nil, "nothing emitted before start()")
        await hit.start()
        let deferred = try #require(hit.lastLink, "the match emits before start() returns")
        #expect(deferred.isDeferred && deferred.linkId == "lnk_welcome")
        var links = hit.links.makeAsyncIterator()
        #expect(await links.next() == deferred, "the link a new stream replays")
        hit.handle(url: Self.customSchemeURL)
        #expect(await links.next()?.params == ["code": "SUMMER"])
        #expect(hit.lastLink?.params == ["code": "SUMMER"], "a later link replaces it")

        let missTransport = StubTransport()
        missTransport.enqueue([.status(201, Fixture.missBody)], for: .match)
        let miss = OptoLink(config: Fixture.config(), environment: Fixture.environment(missTransport))
        await miss.start()
        #expect(miss.lastLink == nil, "a miss emits nothing")
    }

    @Test func resolveDeferredLinkIgnoresTheFlagAndReturnsTheHit() async throws {
        let transport = StubTransport()
        transport.enqueue([.status(201, Fixture.hitLowercaseBody)], for: .match)
        let sdk = OptoLink(
            config: Fixture.config(), environment: Fixture.environment(transport, store: Fixture.launchedStore()))
        await sdk.start()
        let link = try await sdk.resolveDeferredLink()
        #expect(link?.linkId == "lnk_welcome")
        #expect(link?.isDeferred == true)
    }

    @Test func deviceIdIsAPersistedLowercaseUUIDv4() {
        let store = InMemoryKeyValueStore()
        let sdk = OptoLink(config: Fixture.config(), environment: Fixture.environment(StubTransport(), store: store))
        #expect(UUID(uuidString: sdk.deviceId) != nil)
        #expect(sdk.deviceId == sdk.deviceId.lowercased())
        #expect(Array(sdk.deviceId)[14] == "4", "version nibble")
        #expect(store.string(forKey: "deviceId") == sdk.deviceId)
        store.removeAll()
        let reset = OptoLink(config: Fixture.config(), environment: Fixture.environment(StubTransport(), store: store))
        #expect(reset.deviceId != sdk.deviceId, "a reset clears the id with the flag")
    }

    @Test func disposeCancelsBackgroundWorkAndIgnoresLaterLinks() async throws {
        let transport = StubTransport()
        transport.enqueue([.hang], for: .session)
        let sdk = OptoLink(
            config: Fixture.config(),
            environment: Fixture.environment(transport, clock: ManualClock(), store: Fixture.launchedStore()))
        await sdk.start()
        await transport.waitForRequests(1)
        sdk.dispose()
        await sdk.waitForBackgroundWork()
        sdk.handle(url: URL(string: "myapp://late")!)
        var links = sdk.links.makeAsyncIterator()
        #expect(await links.next() == nil)
    }
}

/// The singleton registry (serialised: it is process-wide state).
@Suite(.serialized, .timeLimit(.minutes(1)))
struct SingletonTests {
    @Test func hundredConcurrentInitializeCallersShareOneInstanceAndOneMatch() async throws {
        let transport = StubTransport()
        let gate = Gate()
        transport.enqueue([.gated(gate, then: .status(201, Fixture.hitLowercaseBody))], for: .match)
        let environment = Fixture.environment(transport)
        let config = Fixture.config()
        #expect(OptoLink.current == nil)

        let instances = await withTaskGroup(of: OptoLink?.self) { group in
            for _ in 0..<100 {
                group.addTask { await OptoLink.initialize(config: config, environment: environment) }
            }
            group.addTask {
                await transport.waitForRequests(1)
                // Registered before the match: handle(url:) parks during it.
                OptoLink.instance().handle(url: URL(string: "myapp://during")!)
                gate.open()
                return nil
            }
            var instances: [OptoLink] = []
            for await instance in group { if let instance { instances.append(instance) } }
            return instances
        }
        #expect(instances.count == 100)
        let shared = OptoLink.instance()
        #expect(instances.allSatisfy { $0 === shared })
        #expect(transport.requests(for: .match).count == 1)
        var links = shared.links.makeAsyncIterator()
        #expect(await links.next()?.path == "", "the parked raw link follows the deferred one")

        shared.dispose()
        #expect(OptoLink.current == nil)
        let again = await OptoLink.initialize(config: config, environment: Fixture.environment(transport))
        #expect(again !== shared)
        again.dispose()
    }
}

/// `dispose()` during the first-launch match cancels it without a session call.
@Suite(.timeLimit(.minutes(1)))
struct DisposeDuringStartTests {
    @Test func disposeCancelsTheRunningMatch() async throws {
        let transport = StubTransport()
        transport.enqueue([.hang], for: .match)
        let sdk = OptoLink(config: Fixture.config(), environment: Fixture.environment(transport, clock: ManualClock()))
        let start = Task { await sdk.start() }
        await transport.waitForRequests(1)
        sdk.dispose()
        await start.value
        await sdk.waitForBackgroundWork()
        #expect(transport.requests.map(\.context.endpoint) == [.match])
        await sdk.start()
        #expect(transport.requests.count == 1, "start() after dispose() does nothing")
    }
}

/// The park-versus-flush race: a URL handled while `start()` finishes is emitted exactly once.
@Suite(.timeLimit(.minutes(1)))
struct ParkingRaceTests {
    @Test func urlHandledConcurrentlyWithStartIsEmittedExactlyOnce() async throws {
        for round in 0..<200 {
            let transport = StubTransport()
            let sdk = OptoLink(
                config: Fixture.config(), environment: Fixture.environment(transport, store: Fixture.launchedStore()))
            let url = try #require(URL(string: "myapp://race?round=\(round)"))
            var links = sdk.links.makeAsyncIterator()
            async let started: Void = sdk.start()
            sdk.handle(url: url)
            await started
            let link = try #require(await links.next())
            #expect(link.params == ["round": "\(round)"])
            sdk.dispose()
            #expect(await links.next() == nil, "no second emission of the same URL")
        }
    }
}
