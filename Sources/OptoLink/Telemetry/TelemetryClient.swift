import Foundation

/// The `/sdk/*` calls (docs/CONTRACT.md §1): session check-in, identity, identity clear, events.
/// All carry `Authorization: Bearer`; retry classes per docs/CONTRACT.md §2.
///
/// A class, made once per instance: every public call captures it, and a reference is one
/// retain where a copy of its fields (the device's strings, the API client) would be a dozen.
final class TelemetryClient: Sendable {
    let api: OptoLinkAPIClient
    let deviceId: String
    let deviceInfo: OptoLinkDeviceInfo

    init(api: OptoLinkAPIClient, deviceId: String, deviceInfo: OptoLinkDeviceInfo) {
        self.api = api
        self.deviceId = deviceId
        self.deviceInfo = deviceInfo
    }

    /// `POST /sdk/session` with `deviceId`, `platform`, `osVersion`, `sdkVersion`.
    func session(callId: UInt64? = nil) async throws {
        let body = [
            "deviceId": deviceId, "platform": deviceInfo.platform,
            "osVersion": deviceInfo.osVersion, "sdkVersion": OptoLinkVersion.current,
        ]
        _ = try await api.post(.session, body: body, callId: callId)
    }

    /// `POST /sdk/identity` with `deviceId`, `externalId`.
    func setIdentity(externalId: String, scope: OptoLinkCallScope? = nil) async throws {
        _ = try await api.post(.identity, body: ["deviceId": deviceId, "externalId": externalId], scope: scope)
    }

    /// `POST /sdk/identity/clear` with `deviceId`.
    func clearIdentity(scope: OptoLinkCallScope? = nil) async throws {
        _ = try await api.post(.identityClear, body: ["deviceId": deviceId], scope: scope)
    }

    /// `POST /sdk/events` with `deviceId`, `eventName`, `properties` (flat string map).
    /// `nonisolated(nonsending)` where the compiler has it (Swift 6.2), like the retry loop's `run`.
    #if compiler(>=6.2)
        nonisolated(nonsending) func trackEvent(
            name: String, properties: [String: String], scope: OptoLinkCallScope? = nil
        ) async throws {
            _ = try await api.send(try eventRequest(name: name, properties: properties), to: .events, scope: scope)
        }
    #else
        func trackEvent(name: String, properties: [String: String], scope: OptoLinkCallScope? = nil) async throws {
            _ = try await api.send(try eventRequest(name: name, properties: properties), to: .events, scope: scope)
        }
    #endif

    /// The `POST /sdk/events` request. The most frequent body is written directly; any shape the
    /// writer declines takes the general path.
    func eventRequest(name: String, properties: [String: String]) throws -> OptoLinkHTTPRequest {
        if let json = OptoLinkJSONBody.encodeEvent(deviceId: deviceId, eventName: name, properties: properties) {
            return try api.factory.post(.events, json: json)
        }
        let body: [String: Any] = ["deviceId": deviceId, "eventName": name, "properties": properties]
        return try api.factory.post(.events, body: body)
    }
}
