import Foundation

extension OptoLinkDeviceInfo {
    /// This device's fingerprint (docs/CONTRACT.md §2, decision 6): `"iOS"`, major.minor OS version
    /// from `ProcessInfo`, `"iPad"` or `"iPhone"` from the hardware family (no UIKit, so no
    /// main-actor hop), and the preferred language as BCP-47 (`"en-US"` when unknown).
    public static var current: OptoLinkDeviceInfo {
        let version = ProcessInfo.processInfo.operatingSystemVersion
        return OptoLinkDeviceInfo(
            platform: "iOS",
            osVersion: "\(version.majorVersion).\(version.minorVersion)",
            deviceModel: hardwareFamily(),
            language: preferredLanguage())
    }

    /// `"iPad"` when the hardware identifier (or the simulator's) names an iPad, else `"iPhone"`.
    static func hardwareFamily() -> String {
        if let simulated = ProcessInfo.processInfo.environment["SIMULATOR_MODEL_IDENTIFIER"] {
            return simulated.hasPrefix("iPad") ? "iPad" : "iPhone"
        }
        var info = utsname()
        guard uname(&info) == 0 else { return "iPhone" }
        let machine = withUnsafeBytes(of: &info.machine) { bytes in
            String(decoding: bytes.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
        return machine.hasPrefix("iPad") ? "iPad" : "iPhone"
    }

    /// The first preferred language as a BCP-47 tag (`_` replaced by `-`).
    static func preferredLanguage() -> String {
        let raw = Locale.preferredLanguages.first ?? Locale.current.identifier
        let tag = raw.replacingOccurrences(of: "_", with: "-")
        return tag.isEmpty || tag == "C" || tag.hasPrefix("en-US-POSIX") ? "en-US" : tag
    }
}
