import Foundation

/// The persistent key-value store holding `deviceId` and the first-launch flag
/// (docs/CONTRACT.md §2, decision 3: one store, a reset clears both).
///
/// On Apple platforms the default is the UserDefaults suite `optolink_sdk`; elsewhere an
/// in-memory store. Implementations must be safe to call from any thread.
public protocol OptoLinkKeyValueStore: Sendable {
    /// The string stored under `key`, or `nil`.
    func string(forKey key: String) -> String?
    /// Stores `value` under `key`; `nil` removes the key.
    func setString(_ value: String?, forKey key: String)
    /// The boolean stored under `key`; `false` when absent.
    func bool(forKey key: String) -> Bool
    /// Stores `value` under `key`.
    func setBool(_ value: Bool, forKey key: String)
    /// Removes every key this store holds for the SDK.
    func removeAll()
}

/// A clipboard the deferred match reads once in the first-launch window
/// (docs/CONTRACT.md §2, "Deferred match"). `UIPasteboard.general` on iOS.
public protocol OptoLinkPasteboard: Sendable {
    /// The current string content, or `nil` when empty or not a string.
    func string() -> String?
    /// Clears the content (called only after a deferred-match hit).
    func clear()
}

/// The fingerprint source for `POST /match` (docs/CONTRACT.md §1, `/match` body; decision 6).
public struct OptoLinkDeviceInfo: Sendable, Equatable, Codable {
    /// Always `"iOS"` for this SDK.
    public var platform: String
    /// Major.minor OS version, e.g. `"18.1"` (never the patch).
    public var osVersion: String
    /// `"iPhone"` or `"iPad"`, as Safari's User-Agent says (never a hardware id).
    public var deviceModel: String
    /// BCP-47 language tag, e.g. `"en-US"`.
    public var language: String

    /// A fingerprint as `POST /match` sends it.
    ///
    /// - Parameters:
    ///   - platform: `"iOS"` (the default; the backend also knows `"Android"`).
    ///   - osVersion: major.minor, e.g. `"18.1"`.
    ///   - deviceModel: `"iPhone"` or `"iPad"`.
    ///   - language: a BCP-47 tag, e.g. `"en-US"`.
    public init(platform: String = "iOS", osVersion: String, deviceModel: String, language: String) {
        self.platform = platform
        self.osVersion = osVersion
        self.deviceModel = deviceModel
        self.language = language
    }
}
