import Foundation
import OptoLink
import OptoLinkTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// docs/CONTRACT.md §2: the decision trail, and the API key never logged whole.
@Suite(.timeLimit(.minutes(1)))
struct LoggingTests {
    static let secretKey = "opl_sdk_live_Zx9Qv7Lm2Np4Rt6Wy8Bc"

    func config(_ logger: RecordingLogger) -> OptoLinkConfig {
        var config = OptoLinkConfig(apiKey: Self.secretKey, orgKey: "acme", baseUrl: Fixture.baseUrl)
        config.logger = logger
        return config
    }

    @Test func keyNeverLoggedOnTheHappyPathWithRetries() async throws {
        let logger = RecordingLogger()
        let transport = StubTransport()
        transport.enqueue(
            [.status(429, Fixture.rateLimited("1 second")), .status(201, Fixture.hitLowercaseBody)], for: .match)
        let sdk = OptoLink(
            config: config(logger), environment: Fixture.environment(transport, pasteboard: InMemoryPasteboard("opl_t"))
        )
        await sdk.start()
        sdk.handle(url: Drive.universalLink)
        try await sdk.setIdentity(externalId: "u1")
        try await sdk.trackEvent(name: "open")
        await sdk.waitForBackgroundWork()

        let text = logger.allText
        #expect(!logger.entries.isEmpty)
        #expect(!text.contains(Self.secretKey))
        #expect(!text.contains("Zx9Qv7Lm2Np4Rt6Wy8Bc"))
        #expect(
            text.contains("opl_sdk_…(\(Self.secretKey.count) chars)"), "the key is identified only by prefix and length"
        )
        let info = logger.messages(at: .info).joined(separator: "\n")
        #expect(info.contains("first launch true"))
        #expect(info.contains("clipboard leg collected a click token"))
        #expect(info.contains("retrying after 1.0 seconds"))
        #expect(info.contains("hit FINGERPRINT_EXACT"))
    }

    @Test func keyNeverLoggedOnFailures() async throws {
        let logger = RecordingLogger()
        let transport = StubTransport()
        transport.setDefault(.error(URLError(.networkConnectionLost)), for: .match)
        transport.setDefault(.status(401, Fixture.unauthorized), for: .session)
        transport.setDefault(.status(401, Fixture.unauthorized), for: .events)
        transport.setDefault(.status(502, Fixture.nginx502), for: .data)
        let sdk = OptoLink(config: config(logger), environment: Fixture.environment(transport))
        await sdk.start()
        sdk.handle(url: Drive.universalLink)
        await #expect(throws: OptoLinkApiError.self) { try await sdk.trackEvent(name: "open") }
        await #expect(throws: OptoLinkConnectionError.self) { try await sdk.resolveDeferredLink() }
        await sdk.waitForBackgroundWork()

        #expect(!logger.messages(at: .warning).isEmpty)
        #expect(!logger.allText.contains(Self.secretKey))
        #expect(logger.entries.contains { $0.level == .warning && $0.message.contains("session") && $0.error != nil })
    }

    @Test func noLoggerMeansNoWork() async throws {
        let transport = StubTransport()
        let sdk = OptoLink(config: Fixture.config(logger: nil), environment: Fixture.environment(transport))
        await sdk.start()
        #expect(transport.requests(for: .match).count == 1)
    }
}

/// `OptoLinkConfig` defaults and the blank-key precondition (tested through its check).
@Suite struct ConfigTests {
    @Test func defaultsFollowTheSeed() {
        let config = OptoLinkConfig(apiKey: "opl_sdk_x", orgKey: "acme", baseUrl: Fixture.baseUrl)
        #expect(config.timeout == 10)
        #expect(config.maxRetries == 2)
        #expect(config.clipboardEnabled)
        #expect(config.logger == nil)
    }

    @Test(arguments: ["", "   ", "\n\t", "\u{00A0}\u{2003}\r\n"])
    func blankKeysAreRejected(_ key: String) throws {
        let problem = try #require(OptoLinkConfig.validationProblem(apiKey: key))
        #expect(problem.contains("apiKey must not be blank"))
    }

    @Test(arguments: ["opl_sdk_test_acme_client", "  opl_sdk_padded\n", "\u{00A0}ключ", "ü"])
    func aRealKeyPasses(_ key: String) {
        #expect(OptoLinkConfig.validationProblem(apiKey: key) == nil)
    }

    @Test func systemEnvironmentIsCheapAndShared() {
        let a = OptoLinkEnvironment.system
        let b = OptoLinkEnvironment.system
        #expect((a.transport as? URLSessionTransport) === (b.transport as? URLSessionTransport))
        #expect(a.deviceInfo.platform == "iOS")
        #expect(a.deviceInfo.osVersion.split(separator: ".").count == 2)
        #expect(!a.deviceInfo.language.contains("_"))
    }
}

/// The default transport against a closed local port: a URLError, never another error type.
@Suite(.timeLimit(.minutes(1)))
struct URLSessionTransportTests {
    @Test func refusedConnectionThrowsURLError() async throws {
        let transport = URLSessionTransport(configuration: .ephemeral, maximumConnectionsPerHost: 2)
        #expect(transport.session.configuration.httpMaximumConnectionsPerHost == 2)
        let request = OptoLinkHTTPRequest(method: "GET", url: URL(string: "http://127.0.0.1:9/x")!)
        let context = OptoLinkRequestContext(endpoint: .data, callId: 1, attempt: 1, timeout: .seconds(2))
        await #expect(throws: URLError.self) { _ = try await transport.send(request, context: context) }
    }
}
