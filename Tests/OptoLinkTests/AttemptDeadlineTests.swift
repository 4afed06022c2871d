import Foundation
import OptoLink
import OptoLinkTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// docs/CONTRACT.md §2, timeout per attempt, on the real `ContinuousClock` (the dispatch-timer path;
/// the virtual-time path is covered by the retry-matrix tests). Real time here is a few
/// tens of milliseconds per test.
@Suite(.timeLimit(.minutes(1)))
struct AttemptDeadlineTests {
    static let ok = OptoLinkHTTPResponse(status: 200, headers: [:], body: Data("{}".utf8))

    /// An operation that never answers and reports whether it saw cancellation.
    static func hang(_ sawCancel: TestLock<Bool>) async throws -> OptoLinkHTTPResponse {
        do {
            try await Task.sleep(for: .seconds(30))
        } catch {
            sawCancel.withLock { $0 = true }
            throw URLError(.cancelled)
        }
        return ok
    }

    /// A deadline far beyond the operation's own time: when the whole suite starts at once on 2
    /// cores, the operation's task may not run for several seconds (a 5 s deadline fired first
    /// once in CI, which is a timeout, rightly reported, not what these two tests are about).
    static let generous = OptoLinkDuration.seconds(45)

    @Test func aResponseBeforeTheDeadlineIsReturned() async throws {
        let response = try await OptoLinkAttemptDeadline.race(Self.generous, on: OptoLinkSystemClock()) { Self.ok }
        #expect(response.status == 200)
    }

    @Test func aTransportErrorBeforeTheDeadlineIsRethrownAsIs() async throws {
        await #expect(throws: URLError(.cannotConnectToHost)) {
            try await OptoLinkAttemptDeadline.race(Self.generous, on: OptoLinkSystemClock()) {
                throw URLError(.cannotConnectToHost)
            }
        }
    }

    @Test func theDeadlineCancelsTheAttemptAndThrowsTimedOut() async throws {
        let sawCancel = TestLock(false)
        let started = ContinuousClock.now
        await #expect(throws: URLError(.timedOut)) {
            try await OptoLinkAttemptDeadline.race(.milliseconds(50), on: OptoLinkSystemClock()) {
                try await Self.hang(sawCancel)
            }
        }
        let elapsed = ContinuousClock.now - started
        #expect(elapsed >= .milliseconds(50))
        #expect(elapsed < .seconds(10))
        #expect(sawCancel.withLock { $0 })
    }

    @Test func cancellingTheCallerCancelsTheAttemptWithoutATimeout() async throws {
        let sawCancel = TestLock(false)
        let call = Task {
            try await OptoLinkAttemptDeadline.race(.seconds(20), on: OptoLinkSystemClock()) {
                try await Self.hang(sawCancel)
            }
        }
        try await Task.sleep(for: .milliseconds(20))
        call.cancel()
        let result = await call.result
        #expect(throws: URLError(.cancelled)) { try result.get() }
        #expect(sawCancel.withLock { $0 })
    }
}
