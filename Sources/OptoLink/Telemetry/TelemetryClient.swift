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
    nonisolated(nonsending) func trackEvent(name: String, properties: [String: String], scope: OptoLinkCallScope? = nil)
        async throws
    {
        // The most frequent body, written directly; any shape the writer declines takes the general path.
        if let json = OptoLinkJSONBody.encodeEvent(deviceId: deviceId, eventName: name, properties: properties) {
            _ = try await api.post(.events, json: json, scope: scope)
            return
        }
        let body: [String: Any] = ["deviceId": deviceId, "eventName": name, "properties": properties]
        _ = try await api.post(.events, body: body, scope: scope)
    }
}
