import Foundation
import SoakSupport

/// One thing a virtual device does. Strings may contain the placeholders `{device}`
/// (device id), `{seq}` (per-device sequence number), `{run}` (run id), `{org}` (org key).
package enum JourneyStep: Sendable, Equatable {
    /// A browser click on `link` (a short code) through the emulator's click route, before install.
    case click(link: String, org: String?)
    /// First app launch: a new SDK instance, `start()` (the deferred match).
    case firstLaunch
    /// A later launch: a new SDK instance over the same store, `start()` (no `/match`).
    case relaunch
    /// `handle(url:)` with a Universal Link (`style == .universal`, `https://host/org/link`)
    /// or a custom-scheme URL, then await the emitted link for at most `timeout` seconds.
    case open(link: String, style: OpenStyle, timeout: Double)
    /// `trackEvent` `repeat` times, each with `opl_corr` added to `properties`.
    case event(name: String, properties: [String: String], repeat: Int)
    /// `setIdentity(externalId:)`.
    case identify(externalId: String)
    /// `clearIdentity()`.
    case clearIdentity
    /// Think time in seconds (on the injected clock), plus up to `jitter` seconds at random.
    case wait(seconds: Double, jitter: Double)

    /// How an `open` step's URL reaches the app.
    package enum OpenStyle: String, Sendable, Codable, CaseIterable {
        case universal, custom
    }

    /// The step kinds as written in profiles.
    package static let kinds = [
        "click", "firstLaunch", "relaunch", "open", "event", "identify", "clearIdentity", "wait",
    ]

    /// The `kind` string of this step.
    package var kind: String {
        switch self {
        case .click: "click"
        case .firstLaunch: "firstLaunch"
        case .relaunch: "relaunch"
        case .open: "open"
        case .event: "event"
        case .identify: "identify"
        case .clearIdentity: "clearIdentity"
        case .wait: "wait"
        }
    }
}

extension JourneyStep: Codable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case kind, link, org, style, timeout, name, properties, `repeat`, externalId, seconds, jitter
    }

    private static func allowedKeys(_ kind: String) -> Set<String> {
        switch kind {
        case "click": ["kind", "link", "org"]
        case "open": ["kind", "link", "style", "timeout"]
        case "event": ["kind", "name", "properties", "repeat"]
        case "identify": ["kind", "externalId"]
        case "wait": ["kind", "seconds", "jitter"]
        default: ["kind"]
        }
    }

    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let kind = try c.decodeField(String.self, forKey: .kind)
        guard Self.kinds.contains(kind) else {
            throw DecodingError.dataCorruptedError(
                forKey: .kind, in: c,
                debugDescription: "unknown step \"\(kind)\" (expected one of \(Self.kinds.joined(separator: ", ")))"
            )
        }
        let allowed = Self.allowedKeys(kind)
        let present = try decoder.container(keyedBy: AnyCodingKey.self).allKeys
        for key in present.sorted(by: { $0.stringValue < $1.stringValue }) where !allowed.contains(key.stringValue) {
            try c.reportOrThrow(
                DecodingError.dataCorrupted(
                    .init(
                        codingPath: decoder.codingPath + [key],
                        debugDescription:
                            "unknown field for a \"\(kind)\" step (expected one of \(allowed.sorted().joined(separator: ", ")))"
                    )
                ))
        }
        switch kind {
        case "click":
            self = .click(
                link: try c.decodeRequired(String.self, forKey: .link, "must not be empty") { !$0.isEmpty },
                org: try c.decodeFieldIfPresent(String.self, forKey: .org)
            )
        case "firstLaunch": self = .firstLaunch
        case "relaunch": self = .relaunch
        case "open":
            let styleText = try c.decodeFieldIfPresent(String.self, forKey: .style) ?? "universal"
            guard let style = OpenStyle(rawValue: styleText) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .style, in: c,
                    debugDescription: "unknown style \"\(styleText)\" (expected one of universal, custom)"
                )
            }
            self = .open(
                link: try c.decodeRequired(String.self, forKey: .link, "must not be empty") { !$0.isEmpty },
                style: style,
                timeout: try c.decodeChecked(Double.self, forKey: .timeout, default: 5, "must be 0.01…120 seconds") {
                    (0.01...120).contains($0)
                }
            )
        case "event":
            self = .event(
                name: try c.decodeRequired(String.self, forKey: .name, "must be 1…255 characters") {
                    (1...255).contains($0.count)
                },
                properties: try c.decodeFieldIfPresent([String: String].self, forKey: .properties) ?? [:],
                repeat: try c.decodeChecked(Int.self, forKey: .repeat, default: 1, "must be 1…10000") {
                    (1...10_000).contains($0)
                }
            )
        case "identify":
            self = .identify(
                externalId: try c.decodeChecked(
                    String.self, forKey: .externalId, default: "user-{device}", "must not be empty"
                ) {
                    !$0.isEmpty
                }
            )
        case "clearIdentity": self = .clearIdentity
        default:
            self = .wait(
                seconds: try c.decodeRequired(Double.self, forKey: .seconds, "must be 0…3600 seconds") {
                    (0...3600).contains($0)
                },
                jitter: try c.decodeChecked(Double.self, forKey: .jitter, default: 0, "must be 0…3600 seconds") {
                    (0...3600).contains($0)
                }
            )
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(kind, forKey: .kind)
        switch self {
        case .click(let link, let org):
            try c.encode(link, forKey: .link)
            try c.encodeIfPresent(org, forKey: .org)
        case .open(let link, let style, let timeout):
            try c.encode(link, forKey: .link)
            try c.encode(style, forKey: .style)
            try c.encode(timeout, forKey: .timeout)
        case .event(let name, let properties, let count):
            try c.encode(name, forKey: .name)
            try c.encode(properties, forKey: .properties)
            try c.encode(count, forKey: .repeat)
        case .identify(let externalId):
            try c.encode(externalId, forKey: .externalId)
        case .wait(let seconds, let jitter):
            try c.encode(seconds, forKey: .seconds)
            try c.encode(jitter, forKey: .jitter)
        case .firstLaunch, .relaunch, .clearIdentity:
            break
        }
    }
}
