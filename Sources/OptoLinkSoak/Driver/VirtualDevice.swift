import OptoLink
import Synchronization
import SoakSupport

/// One simulated phone: its own store, clipboard, fingerprint and client IP. Each launch
/// builds a new `OptoLink` instance over the same store (one instance = one app launch).
package final class VirtualDevice: Sendable {
    struct State {
        var launch = 0
        var sequence = 0
        var clickedLinkId: String?
        var instance: OptoLink?
        var lastLink: OptoLinkData?
    }

    /// `d000042`.
    package let id: String
    package let info: OptoLinkDeviceInfo
    /// The simulated client IP sent as `X-Forwarded-For`; under `--local-ips`, the real source
    /// address its connections bind to (``bindsSource``).
    package let clientIP: String
    /// Whether ``clientIP`` is a local address this device's requests leave from (`--local-ips`)
    /// rather than a header value.
    package let bindsSource: Bool
    package let sharedNAT: Bool
    /// Whether a click's clipboard payload survives the App Store hop on this device.
    package let clipboardSurvives: Bool
    /// Whether this device's SDK runs with the route cache on (`OptoLinkConfig.routeCache`).
    package let routeCache: Bool
    package let store: InMemoryKeyValueStore
    package let pasteboard: DevicePasteboard
    let state = Mutex(State())

    package init(
        id: String, info: OptoLinkDeviceInfo, clientIP: String, sharedNAT: Bool, clipboardSurvives: Bool,
        routeCache: Bool = false, bindsSource: Bool = false
    ) {
        self.bindsSource = bindsSource
        self.routeCache = routeCache
        self.id = id
        self.info = info
        self.clientIP = clientIP
        self.sharedNAT = sharedNAT
        self.clipboardSurvives = clipboardSurvives
        self.store = InMemoryKeyValueStore()
        self.pasteboard = DevicePasteboard()
    }

    /// This device (not launched yet) with its requests leaving from the local `address`, which
    /// becomes its client IP.
    func leaving(from address: String) -> VirtualDevice {
        VirtualDevice(
            id: id, info: info, clientIP: address, sharedNAT: sharedNAT, clipboardSurvives: clipboardSurvives,
            routeCache: routeCache, bindsSource: true)
    }

    /// Safari's User-Agent for this device's model and OS (what the click route parses).
    package var userAgent: String {
        let os = info.osVersion.replacingOccurrences(of: ".", with: "_")
        let platform = info.deviceModel == "iPad" ? "iPad; CPU OS \(os)" : "iPhone; CPU iPhone OS \(os)"
        return "Mozilla/5.0 (\(platform) like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
            + "Version/\(info.osVersion) Mobile/15E148 Safari/604.1"
    }

    /// The next per-device sequence number (for `opl_corr` and `{seq}`), from 1.
    func nextSequence() -> Int {
        state.withLock { s in
            s.sequence += 1
            return s.sequence
        }
    }

    /// Builds the device list of a population, deterministically from `seed`.
    package static func population(_ p: DevicePopulation, seed: UInt64) -> [VirtualDevice] {
        var rng = SeededRandom(seed: seed ^ 0xD1CE)
        let width = Swift.max(6, String(p.count).count)
        return (0..<p.count).map { i in
            let number = String(i + 1)
            let id = "d" + String(repeating: "0", count: Swift.max(0, width - number.count)) + number
            let info = OptoLinkDeviceInfo(
                osVersion: rng.pick(p.osVersions), deviceModel: rng.pick(p.models), language: rng.pick(p.languages))
            let nat = rng.unit() < p.sharedNAT
            let survives = rng.unit() < p.clipboardSurvives
            let n = i + 1
            let ip = nat ? p.sharedNATAddress : "10.\((n >> 16) & 255).\((n >> 8) & 255).\(n & 255)"
            return VirtualDevice(
                id: id, info: info, clientIP: ip, sharedNAT: nat, clipboardSurvives: survives,
                routeCache: p.routeCacheOn(index: i))
        }
    }
}
