import Foundation
import OptoLink
import Testing

@testable import OptoLinkSoak
import SoakRecords

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("Recording middleware")
struct RecorderTests {
    static func request(_ body: String, ip: String = "10.0.0.9") -> OptoLinkHTTPRequest {
        OptoLinkHTTPRequest(
            method: "POST", url: URL(string: "http://127.0.0.1:1/sdk/events")!,
            headers: ["X-Forwarded-For": ip], body: Data(body.utf8))
    }

    @Test("attempts carry intended start, Retry-After, correlation id and IP; calls aggregate them")
    func recordsAttemptsAndCalls() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rec-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let timeline = RunTimeline()
        let recorder = try SoakRecorder(directory: directory, timeline: timeline)
        let label = "d000001#2"
        let body = #"{"deviceId":"x","eventName":"e","properties":{"opl_corr":"run:d000001:5"}}"#
        let step = StepContext(intendedStart: 0)
        try await Task.sleep(for: .milliseconds(20))
        let replies = [
            OptoLinkHTTPResponse(
                status: 429, body: Data(#"{"message":"Rate limit exceeded. Retry after 3 seconds."}"#.utf8)),
            OptoLinkHTTPResponse(status: 200, body: Data(#"{"ok":true}"#.utf8)),
        ]
        try await StepContext.$current.withValue(step) {
            for (index, reply) in replies.enumerated() {
                let context = OptoLinkRequestContext(
                    endpoint: .events, callId: 7, attempt: index + 1, instanceLabel: label, timeout: .seconds(10))
                let response = try await recorder.intercept(Self.request(body), context: context) { _, _ in reply }
                #expect(response.status == reply.status)
            }
            let failing = OptoLinkRequestContext(
                endpoint: .identity, callId: 8, attempt: 1, instanceLabel: label, timeout: .seconds(10))
            await #expect(throws: URLError.self) {
                _ = try await recorder.intercept(Self.request("{}"), context: failing) { _, _ in
                    throw URLError(.timedOut)
                }
            }
        }
        #expect(step.callIds == [7, 8])
        recorder.closeCalls(DeviceLaunch(label: label), callIds: [7], outcome: .ok)
        recorder.finish()

        let attempts = try ReportCSVReader.attempts(directory.appendingPathComponent("attempts.csv"))
        #expect(attempts.count == 3)
        #expect(attempts[0].device == "d000001" && attempts[0].launch == 2)
        #expect(attempts[0].intendedStart == 0)
        #expect(attempts[0].actualStart >= 0.015)
        #expect(attempts[0].retryAfterSeconds == 3)
        #expect(attempts[0].correlationId == "run:d000001:5")
        #expect(attempts[0].clientIP == "10.0.0.9")
        #expect(attempts[1].intendedStart == attempts[1].actualStart, "a retry is measured from its own start")
        #expect(attempts[2].errorKind == .timedOut && attempts[2].status == nil)
        #expect(attempts[2].intendedStart == attempts[2].actualStart, "only the step's first call claims its due time")

        let calls = try ReportCSVReader.calls(directory.appendingPathComponent("calls.csv"))
        #expect(calls.count == 2)
        let event = try #require(calls.first { $0.callId == 7 })
        #expect(event.attempts == 2 && event.outcome == .ok && event.finalStatus == 200)
        #expect(event.correlationId == "run:d000001:5")
        let identity = try #require(calls.first { $0.callId == 8 })
        #expect(identity.outcome == .connectionError)
    }

    @Test("a call closed while its attempt is in flight is written when the attempt ends")
    func closeWhileInFlight() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rec-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let recorder = try SoakRecorder(directory: directory, timeline: RunTimeline())
        let (gate, open) = AsyncStream<Void>.makeStream()
        let context = OptoLinkRequestContext(
            endpoint: .session, callId: 2, attempt: 1, instanceLabel: "d000003#1", timeout: .seconds(10))
        async let attempt = recorder.intercept(Self.request("{}"), context: context) { _, _ in
            for await _ in gate {}
            return OptoLinkHTTPResponse(status: 200)
        }
        while recorder.progressCounters(at: 0).requests == 0 && recorder.state.withLock({ $0.calls.openCalls.isEmpty })
        {
            await Task.yield()
        }
        recorder.closeCalls(DeviceLaunch(device: "d000003", launch: 1), callIds: nil, outcome: nil)
        #expect(recorder.callsCSV.rowCount == 0)
        open.finish()
        _ = try await attempt
        #expect(recorder.callsCSV.rowCount == 1)
        recorder.finish()
    }
}
