import Foundation
import Testing

@testable import OptoLinkSoak

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("Stop signals and probe errors")
struct StopRequestsTests {
    @Test("the second signal says the run is already stopping and how long in-flight calls may take")
    func secondSignal() {
        let requests = StopRequests()
        requests.setGrace(15)
        let start = ContinuousClock.now
        let first = requests.record("SIGINT", now: start)
        #expect(first.contains("stopping new work") && first.contains("15 s"))
        let second = requests.record("SIGINT", now: start.advanced(by: .seconds(5)))
        #expect(second == "SIGINT again: already stopping; in-flight calls end within 10 s, then the report is written")
        #expect(requests.count == 2)
    }

    @Test("a backend that accepts but never answers is reported as timed out, in words")
    func timeoutInWords() {
        let message = BackendProbe.describe(URLError(.timedOut), timeout: 5)
        #expect(message.hasPrefix("timed out after 5 s"))
        #expect(!message.contains("-1001"))
        #expect(BackendProbe.describe(URLError(.cannotConnectToHost), timeout: 5).hasPrefix("connection refused"))
    }
}
