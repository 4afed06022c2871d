import Foundation
import OptoLink
import OptoLinkTestSupport

/// Shared builders for the SDK tests.
enum Fixture {
    static let apiKey = "opl_sdk_test_acme_client"
    static let baseUrl = URL(string: "https://api.optolink.test")!
    static let deviceInfo = OptoLinkDeviceInfo(platform: "iOS", osVersion: "18.1", deviceModel: "iPhone", language: "en-US")

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
        clock: any Clock<Duration> = RecordingClock(),
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

    // MARK: seed wire bodies (seed 000 / 002, CONTRACT §1)

    static let missBody = #"{"matched":false,"matchMethod":"NONE"}"#
    static let hitLowercaseBody =
        #"{"matched":true,"matchMethod":"FINGERPRINT_EXACT","matchConfidence":"high","linkId":"lnk_welcome","path":"/welcome","params":{"campaign":"spring"}}"#
    static let notFoundEnvelope =
        #"{"statusCode":404,"error":"Not Found","message":"Link not found","timestamp":"2026-09-20T05:30:58.091Z","path":"/match","requestId":"req-123"}"#
    static let validationEnvelope =
        #"{"statusCode":400,"error":"Bad Request","message":"Validation failed","details":[{"message":"properties must be at most 10240 bytes","field":"properties"},{"message":"bad"}],"timestamp":"2026-09-20T05:30:58.091Z","path":"/sdk/events"}"#
    static let nginx502 = """
        <html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n
        """
    static func rateLimited(_ text: String, path: String = "/match") -> String {
        #"{"statusCode":429,"error":"Too Many Requests","message":"Rate limit exceeded. Retry after \#(text).","timestamp":"2026-09-20T05:30:58.091Z","path":"\#(path)"}"#
    }
    static let serverError =
        #"{"statusCode":500,"error":"Internal Server Error","message":"Internal server error","path":"/x"}"#
    static let unauthorized =
        #"{"statusCode":401,"error":"Unauthorized","message":"Invalid API key","path":"/sdk/events"}"#
}
