import Foundation
import OptoLink
import OptoLinkHTTP
import Synchronization
import Testing

@testable import OptoLinkSoak
import SoakRecords
@testable import SoakVerdicts

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The per-attempt fast paths give the same results as the general code they stand in for: the
/// native transport's own deadline, the call grouping, the correlation id. The CSV rows as bytes
/// and the `opl_corr` scanner are tested in SoakRecordsTests.
@Suite("Hot path equivalence")
struct HotPathTests {
    // MARK: - The native transport's own deadline

    @Test func theNativeTransportRunsTheSDKsDeadlineItself() async throws {
        let client = try HTTPClient()
        let transport: any OptoLinkTransport = NativeTransport(client: client)
        #expect(transport.capabilities.enforcesDeadline)
        #expect(transport.capabilities.registersCallScope)
        await client.shutdown()
    }

    /// Through a real SDK instance on the real clock: the attempt that gets no answer ends as
    /// `.timedOut`, as the recorder and the retry loop expect (the native client's own deadline).
    @Test func anUnansweredAttemptTimesOutThroughTheSDK() async throws {
        let seen = Mutex<[String]>([])
        try await withHTTPServer(
            .init(timeouts: .init(shutdownGrace: .milliseconds(300))),
            handler: { request, _ in
                seen.withLock { $0.append(request.path) }
                return .respondAfter(HTTPResponse(status: 200), delay: .seconds(20))
            }
        ) { server in
            let client = try HTTPClient()
            let observer = ErrorObserver()
            var config = OptoLinkConfig(
                apiKey: "opl_sdk_test_acme_client", orgKey: "acme",
                baseUrl: try #require(URL(string: "http://127.0.0.1:\(server.port)")))
            config.timeout = 0.5
            config.maxRetries = 0
            let sdk = OptoLink(
                config: config,
                environment: OptoLinkEnvironment(
                    store: InMemoryKeyValueStore(), pasteboard: InMemoryPasteboard(nil),
                    deviceInfo: OptoLinkDeviceInfo(osVersion: "18.1", deviceModel: "iPhone", language: "en-US"),
                    transport: NativeTransport(client: client), middlewares: [observer], label: "d000001#1"))
            await #expect(throws: OptoLinkConnectionError.self) { try await sdk.trackEvent(name: "e") }
            #expect(observer.errors.withLock { $0 } == [.timedOut])
            sdk.dispose()
            await client.shutdown()
        }
        // Sent at most once (no retry budget, and the client never re-sends); whether it got there
        // before the deadline depends on how busy the machine is, so that is not asserted.
        #expect(seen.withLock { $0 }.allSatisfy { $0 == "/sdk/events" })
        #expect(seen.withLock { $0 }.count <= 1)
    }

    /// A context without a deadline (timeout zero) waits for the answer instead of failing at once.
    @Test func aZeroTimeoutMeansNoDeadline() async throws {
        try await withHTTPServer(
            .init(),
            handler: { _, _ in .respondAfter(HTTPResponse(status: 204), delay: .milliseconds(30)) }
        ) { server in
            let client = try HTTPClient()
            let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/sdk/events"))
            let response = try await NativeTransport(client: client).send(
                OptoLinkHTTPRequest(method: "POST", url: url, body: Data("{}".utf8)),
                context: OptoLinkRequestContext(endpoint: .events, callId: 1, attempt: 1, timeout: .zero))
            #expect(response.status == 204)
            await client.shutdown()
        }
    }

    /// In the per-device pool mode each virtual device (the label before `#`) has its own
    /// connection, whatever its launch; in the shared mode one idle connection serves them all.
    @Test(arguments: [HTTPClient.PoolMode.perPartition, .shared])
    func devicesGetTheirOwnConnectionOnlyInThePerDeviceMode(_ mode: HTTPClient.PoolMode) async throws {
        let connections = Mutex<[UInt64]>([])
        try await withHTTPServer(
            .init(),
            handler: { _, peer in
                connections.withLock { $0.append(peer.connectionId) }
                return .respond(HTTPResponse(status: 200))
            }
        ) { server in
            let client = try HTTPClient(configuration: .init(poolMode: mode))
            let transport = NativeTransport(client: client)
            let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/sdk/events"))
            for label in ["d000001#1", "d000001#2", "d000002#1"] {
                let context = OptoLinkRequestContext(
                    endpoint: .events, callId: 1, attempt: 1, instanceLabel: label, timeout: .seconds(5))
                let response = try await transport.send(
                    OptoLinkHTTPRequest(method: "POST", url: url, body: Data("{}".utf8)), context: context)
                #expect(response.status == 200)
            }
            await client.shutdown()
        }
        let ids = connections.withLock { $0 }
        #expect(ids.count == 3)
        #expect(ids[0] == ids[1])
        #expect(mode == .perPartition ? ids[2] != ids[0] : ids[2] == ids[0])
    }

    // MARK: - Fewer allocations, same results

    /// The verdict passes group a call's attempts with the first held inline; what they are
    /// handed is still every attempt, by attempt number, whatever order they came in.
    @Test func aCallsAttemptsReachThePassesInAttemptOrder() {
        func attempt(_ callId: UInt64, _ number: Int, start: Double) -> AttemptRecord {
            var record = AttemptRecord(
                device: "d000001", launch: 1, callId: 3, endpoint: .events, attempt: 2, intendedStart: 1.5,
                actualStart: 1.75, end: 1.8, status: 429, errorKind: nil, retryAfterSeconds: 2, requestBytes: 100,
                responseBytes: 90, correlationId: "run:d000001:1", clientIP: "10.0.0.1")
            record.callId = callId
            record.attempt = number
            record.actualStart = start
            record.end = start + 0.1
            return record
        }
        func call(_ callId: UInt64, attempts: Int) -> CallRecord {
            CallRecord(
                device: "d000001", launch: 1, callId: callId, endpoint: .events, attempts: attempts,
                intendedStart: 0, start: 0, end: 9, outcome: .ok, finalStatus: 200, correlationId: nil,
                deviceId: nil)
        }
        var groups = CallGroups()
        for record in [
            attempt(1, 2, start: 2), attempt(2, 1, start: 0.5), attempt(1, 1, start: 1), attempt(1, 3, start: 3),
        ] {
            #expect(groups.consume(.attempt(record)) == nil)
        }
        #expect(groups.consume(.attempt(attempt(3, 1, start: 4))) == nil)
        let first = groups.consume(.call(call(1, attempts: 3)))
        #expect(first?.attempts.map(\.attempt) == [1, 2, 3])
        #expect(first?.attempts.map(\.actualStart) == [1, 2, 3])
        let second = groups.consume(.call(call(2, attempts: 1)))
        #expect(second?.attempts.map(\.attempt) == [1])
        #expect(second?.attempts.first?.actualStart == 0.5)
        #expect(groups.consume(.call(call(1, attempts: 3))) == nil, "a call already handed over")
        let drained = groups.drain()
        #expect(drained.map(\.key.callId) == [3])
        #expect(drained.first?.call == nil)
        #expect(groups.drain().isEmpty)
    }

    /// The correlation id the driver writes is `run:device:seq`, the shape the scanner and the
    /// reconciliation read back.
    @Test func theCorrelationIdIsRunDeviceAndSequence() throws {
        let id = JourneyRunner.correlationId(runId: "r8abc", device: "d000042", sequence: 1234)
        #expect(id == "r8abc:d000042:1234")
        #expect(CorrelationId(id) != nil)
        let body = Data(#"{"properties":{"opl_corr":"\#(id)"}}"#.utf8)
        #expect(CorrelationScanner.scan(body) == .found(id))
    }

    /// A remote backend without `--ledger` can never have a ledger: the live reconciliation pass
    /// is then skipped (reported as not available) instead of holding every event call.
    @Test func reconciliationIsSkippedWhenNoLedgerCanCome() {
        let base = URL(string: "http://127.0.0.1:1")!
        #expect(!RemoteBackend(baseURL: base, ledgerFile: nil).mayHaveLedger)
        #expect(RemoteBackend(baseURL: base, ledgerFile: URL(fileURLWithPath: "/tmp/ledger.jsonl")).mayHaveLedger)
        var pass = ReconciliationVerdict.makePass(VerdictContext(ledgerStreamed: false))
        for callId in 1...50 {
            let call = CallRecord(
                device: "d000001", launch: 1, callId: UInt64(callId), endpoint: .events, attempts: 1,
                intendedStart: 0, start: 0, end: Double(callId), outcome: .ok, finalStatus: 200,
                correlationId: "run:d000001:\(callId)", deviceId: "dev-1")
            pass.consume(.call(call))
        }
        #expect(pass.retained == 0)
        #expect(!pass.finish().available)
    }

    /// Notes the `URLError` code of every attempt that got no response.
    final class ErrorObserver: OptoLinkMiddleware {
        let errors = Mutex<[URLError.Code]>([])

        func intercept(
            _ request: OptoLinkHTTPRequest, context: OptoLinkRequestContext,
            next: @Sendable (OptoLinkHTTPRequest, OptoLinkRequestContext) async throws -> OptoLinkHTTPResponse
        ) async throws -> OptoLinkHTTPResponse {
            do {
                return try await next(request, context)
            } catch let error as URLError {
                errors.withLock { $0.append(error.code) }
                throw error
            }
        }
    }
}
