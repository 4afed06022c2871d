import Foundation
import OptoLink
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("Cancellation shield", .timeLimit(.minutes(1)))
struct CancellationShieldTests {
    @Test("cancelling the caller returns URLError(.cancelled) at once; the operation runs to its end")
    func shield() async throws {
        let (release, open) = AsyncStream<Void>.makeStream()
        let (finished, finish) = AsyncStream<Int>.makeStream()
        let caller = Task {
            try await OptoLinkCancellationShield.run { () async throws -> Int in
                for await _ in release {}
                finish.yield(42)
                finish.finish()
                return 42
            }
        }
        caller.cancel()
        await #expect(throws: URLError.self) { try await caller.value }
        open.finish()
        var results: [Int] = []
        for await value in finished { results.append(value) }
        #expect(results == [42])
    }

    @Test("without cancellation the operation's result and errors pass through")
    func passThrough() async throws {
        #expect(try await OptoLinkCancellationShield.run { 7 } == 7)
        await #expect(throws: URLError.self) {
            try await OptoLinkCancellationShield.run { () async throws -> Int in throw URLError(.timedOut) }
        }
    }

    @Test("optoLinkData throws the same URLError as data(for:) when no response arrives")
    func sameErrorAsDataFor() async throws {
        let session = URLSession(configuration: .ephemeral)
        defer { session.finishTasksAndInvalidate() }
        // Port 1 on loopback: nothing listens there, so the connection is refused.
        let request = URLRequest(url: try #require(URL(string: "http://127.0.0.1:1/")), timeoutInterval: 5)
        var expected: URLError.Code?
        do { _ = try await session.data(for: request) } catch let error as URLError { expected = error.code }
        var actual: URLError.Code?
        do { _ = try await session.optoLinkData(for: request) } catch let error as URLError { actual = error.code }
        #expect(expected != nil)
        #expect(actual == expected)
    }
}
