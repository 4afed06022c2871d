import Foundation
import OptoLinkHTTP
import OptoLinkStaging
import Synchronization

/// A virtual wall clock for the emulator (epoch seconds), advanced by hand.
final class VirtualTime: Sendable {
    private let seconds: Mutex<Double>

    init(_ start: Double = 1_790_000_000) { seconds = Mutex(start) }

    var now: Double { seconds.withLock { $0 } }
    func advance(_ delta: Double) { seconds.withLock { $0 += delta } }
    var clock: StagingClock { StagingClock { [self] in self.now } }
}

/// Drives a ``StagingBackend`` through `handle` directly: no sockets, virtual time.
struct BackendHarness {
    static let clientKey = "opl_sdk_test_acme_client"
    static let safariUA =
        "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1"

    let time: VirtualTime
    let backend: StagingBackend
    var peer = "127.0.0.1"

    init(_ configuration: StagingConfiguration = StagingConfiguration(), time: VirtualTime = VirtualTime()) {
        self.time = time
        backend = StagingBackend(configuration: configuration, clock: time.clock)
    }

    func send(
        _ method: String, _ target: String, headers: [String: String] = [:], body: Any? = nil, rawBody: [UInt8]? = nil
    ) -> HTTPHandlerResult {
        var h = HTTPHeaders()
        for (k, v) in headers.sorted(by: { $0.key < $1.key }) { h.add(k, v) }
        var bytes: [UInt8] = rawBody ?? []
        if let body, let data = try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys]) {
            bytes = Array(data)
            h.add("Content-Type", "application/json")
        }
        let request = HTTPRequest(method: method, target: target, headers: h, body: bytes)
        return backend.handle(request, HTTPConnectionInfo(peerAddress: peer, peerPort: 50_000, connectionId: 1))
    }

    /// Sends and unwraps an immediate response.
    func respond(
        _ method: String, _ target: String, headers: [String: String] = [:], body: Any? = nil, rawBody: [UInt8]? = nil
    ) throws -> HTTPResponse {
        guard case .respond(let response) = send(method, target, headers: headers, body: body, rawBody: rawBody) else {
            throw HarnessError.notImmediate
        }
        return response
    }

    func sdk(
        _ path: String, _ body: [String: Any], key: String? = clientKey, headers: [String: String] = [:]
    ) throws -> HTTPResponse {
        var h = headers
        if let key { h["Authorization"] = "Bearer \(key)" }
        return try respond("POST", path, headers: h, body: body)
    }

    func session(_ deviceId: String, key: String = clientKey) throws -> HTTPResponse {
        try sdk(
            "/sdk/session", ["deviceId": deviceId, "platform": "iOS", "osVersion": "18.1", "sdkVersion": "0.1.0"],
            key: key)
    }

    func event(_ deviceId: String, _ name: String = "purchase", properties: [String: Any] = [:]) throws -> HTTPResponse
    {
        try sdk("/sdk/events", ["deviceId": deviceId, "eventName": name, "properties": properties])
    }

    func match(_ body: [String: Any], headers: [String: String] = [:]) throws -> HTTPResponse {
        try respond("POST", "/match", headers: headers, body: body)
    }

    /// A Safari click on `/{org}/{code}`; returns the clipboard token of the redirect page.
    func click(
        _ org: String = "acme", _ code: String = "welcome", userAgent: String = safariUA,
        language: String = "en-US,en;q=0.9"
    ) throws -> String {
        let response = try respond(
            "GET", "/\(org)/\(code)",
            headers: ["User-Agent": userAgent, "Accept-Language": language, "Host": "links.acme.test"])
        guard response.status == 200 else { throw HarnessError.status(response.status) }
        let html = String(decoding: response.body, as: UTF8.self)
        guard let range = html.range(of: "opl_click=") else { throw HarnessError.noToken }
        return String(html[range.upperBound...].prefix { $0 != "\"" && $0 != "&" })
    }
}

enum HarnessError: Error {
    case notImmediate, noToken
    case status(Int)
}

extension HTTPResponse {
    /// The body as a JSON object.
    func json() throws -> [String: Any] {
        let value = try JSONSerialization.jsonObject(with: Data(body))
        guard let object = value as? [String: Any] else { throw HarnessError.noToken }
        return object
    }

    var text: String { String(decoding: body, as: UTF8.self) }

    /// The envelope's `message`.
    func message() throws -> String? { try json()["message"] as? String }
}

/// iOS fingerprint body of a device that clicked with `BackendHarness.safariUA`.
func iosMatchBody(deviceId: String = "device-0001", token: String? = nil, timezone: String? = nil) -> [String: Any] {
    var body: [String: Any] = [
        "platform": "iOS", "osVersion": "18.1", "deviceModel": "iPhone", "language": "en-US", "deviceId": deviceId,
    ]
    if let token { body["clipboardToken"] = token }
    if let timezone { body["timezone"] = timezone }
    return body
}
