import Foundation
import OptoLink
import OptoLinkTestSupport

/// Shared builders for the SDK tests.
enum Fixture {
    static let apiKey = "opl_sdk_test_acme_client"
    static let baseUrl = URL(string: "https://api.optolink.test")!
    static let deviceInfo = OptoLinkDeviceInfo(
        platform: "iOS", osVersion: "18.1", deviceModel: "iPhone", language: "en-US")

    static func config(logger: (any OptoLinkLogger)? = nil, maxRetries: Int = 2, clipboardEnabled: Bool = true)
        -> OptoLinkConfig
    {
        var config = OptoLinkConfig(apiKey: apiKey, orgKey: "acme", baseUrl: baseUrl)
        config.logger = logger
        config.maxRetries = maxRetries
        config.clipboardEnabled = clipboardEnabled
        return config
    }

    static func environment(
        _ transport: StubTransport,
        clock: any OptoLinkClock = RecordingClock(),
        store: any OptoLinkKeyValueStore = InMemoryKeyValueStore(),
        pasteboard: any OptoLinkPasteboard = InMemoryPasteboard(),
        middlewares: [any OptoLinkMiddleware] = [],
        retryPolicy: any OptoLinkRetryPolicy = OptoLinkContractRetryPolicy(),
        label: String? = "vd-1"
    ) -> OptoLinkEnvironment {
        OptoLinkEnvironment(
            store: store, pasteboard: pasteboard, deviceInfo: deviceInfo, transport: transport,
            middlewares: middlewares, clock: clock, retryPolicy: retryPolicy, label: label)
    }

    /// A store whose first launch has already happened.
    static func launchedStore() -> InMemoryKeyValueStore {
        let store = InMemoryKeyValueStore()
        store.setBool(true, forKey: "firstLaunchDone")
        return store
    }

    // MARK: seed wire bodies (seed 000 / 002, docs/CONTRACT.md §1)

    static let missBody = #"{"matched":false,"matchMethod":"NONE"}"#
    static let hitLowercaseBody =
        #"{"matched":true,"matchMethod":"FINGERPRINT_EXACT","matchConfidence":"high","linkId":"lnk_welcome","path":"/welcome","params":{"campaign":"spring"}}"#
    static let notFoundEnvelope =
        #"{"statusCode":404,"error":"Not Found","message":"Link not found","timestamp":"2026-09-20T05:30:58.091Z","path":"/match","requestId":"req-123"}"#
    static let validationEnvelope =
        #"{"statusCode":400,"error":"Bad Request","message":"Validation failed","details":[{"message":"properties must be at most 10240 bytes","field":"properties"},{"message":"bad"}],"timestamp":"2026-09-20T05:30:58.091Z","path":"/sdk/events"}"#
    static let nginx502 = """
        <html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.18.0</center>\r\n</body>\r\n</html>\r\n
        """
    static func rateLimited(_ text: String, path: String = "/match") -> String {
        #"{"statusCode":429,"error":"Too Many Requests","message":"Rate limit exceeded. Retry after \#(text).","timestamp":"2026-09-20T05:30:58.091Z","path":"\#(path)"}"#
    }
    static let serverError =
        #"{"statusCode":500,"error":"Internal Server Error","message":"Internal server error","path":"/x"}"#
    static let unauthorized =
        #"{"statusCode":401,"error":"Unauthorized","message":"Invalid API key","path":"/sdk/events"}"#
}

/// Drives one endpoint through the public API and labels the outcome.
enum Drive {
    static let universalLink = URL(string: "https://links.acme.test/acme/welcome")!

    /// The short, value-free label of an SDK error (`http_404`, `timed_out`, …).
    static func label(_ error: any Error) -> String {
        switch error {
        case let error as OptoLinkApiError: error.shortDescription
        case let error as OptoLinkConnectionError: error.shortDescription
        default: "foreign:\(type(of: error))"
        }
    }

    /// Calls the public API that reaches `endpoint` and returns `ok`, `nil`, `raw`,
    /// `resolved`, `logged`, or the thrown error's label.
    static func call(_ endpoint: OptoLinkEndpoint, on sdk: OptoLink) async -> String {
        do {
            switch endpoint {
            case .match:
                return try await sdk.resolveDeferredLink() == nil ? "nil" : "hit"
            case .data:
                var iterator = sdk.links.makeAsyncIterator()
                sdk.handle(url: universalLink)
                let link = await iterator.next()
                return link?.linkId == nil ? "raw" : "resolved"
            case .session:
                await sdk.start()
                await sdk.waitForBackgroundWork()
                return "logged"
            case .identity:
                try await sdk.setIdentity(externalId: "user-4711")
            case .identityClear:
                try await sdk.clearIdentity()
            case .events:
                try await sdk.trackEvent(name: "purchase", properties: ["sku": "A1"])
            }
            return "ok"
        } catch {
            return label(error)
        }
    }
}
