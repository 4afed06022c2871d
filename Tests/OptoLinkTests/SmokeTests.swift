import Foundation
import OptoLink
import OptoLinkTestSupport
import Testing

@Suite(.timeLimit(.minutes(1)))
struct SmokeTests {
    @Test func firstLaunchMissSendsMatchThenSession() async throws {
        let transport = StubTransport()
        let sdk = OptoLink(config: Fixture.config(), environment: Fixture.environment(transport))
        await sdk.start()
        await sdk.waitForBackgroundWork()
        #expect(transport.requests.map(\.context.endpoint) == [.match, .session])
        #expect(transport.requests.map(\.context.callId) == [1, 2])
    }
}
