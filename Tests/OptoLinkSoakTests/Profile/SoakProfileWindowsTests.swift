import Foundation
import OptoLinkStaging
import Testing

import OptoLinkSoak

/// The long soak profiles size the embedded emulator's device idle window to their own traffic
/// (issue 12): long enough that a device coming back for its next journey is still known (its
/// events are not refused with 404), short enough that the SDK `deviceId`s of old installs are
/// forgotten well inside the run, so the registry is flat over the half the RSS slope is taken on.
@Suite struct SoakProfileWindowsTests {
    static func profile(_ name: String) throws -> SoakProfile {
        let url = ShippedProfiles.url(name)
        return try SoakProfile.load(contentsOf: url)
    }

    @Test("soak-1h and soak-10m: the device window is 4 revisit periods or more, and flat over soak-1h's 2nd half")
    func deviceWindowFitsTheProfile() throws {
        for name in ["soak-1h.json", "soak-10m.json"] {
            let profile = try Self.profile(name)
            let configuration = try EmbeddedBackend.configuration(for: profile)
            // The slowest arrival rate of the run: each device's next journey comes about
            // `devices / rate` seconds after its last (journeys claim devices round robin).
            let rates = [profile.load.startRate] + profile.load.stages.map(\.target)
            let slowest = try #require(rates.min())
            #expect(slowest > 0, "\(name)")
            let revisit = Double(profile.devices.count) / slowest
            let window = configuration.deviceIdleSeconds
            #expect(window >= 4 * revisit, "\(name): window \(window) s, revisit \(revisit) s")
            // Below the default (one hour), which would hold every install of a one-hour run.
            #expect(window < StagingConfiguration().deviceIdleSeconds, "\(name)")
            if name == "soak-1h.json" {
                // A window plus one sweep period (a quarter window) ends before the second half starts.
                let duration = profile.load.stages.reduce(0) { $0 + $1.duration }
                #expect(window * 1.25 <= duration / 2, "\(name): window \(window) s, run \(duration) s")
            }
        }
    }

    @Test("a profile's backend.deviceIdleSeconds reaches the embedded emulator; a bad one names the field")
    func deviceWindowIsConfigurable() throws {
        var profile = try Self.profile("soak-10m.json")
        #expect(try EmbeddedBackend.configuration(for: profile).deviceIdleSeconds == 900)
        profile.backend = .object(["deviceIdleSeconds": .number(0)])
        #expect {
            _ = try EmbeddedBackend.configuration(for: profile)
        } throws: { error in
            "\(error)".contains("deviceIdleSeconds must be positive")
        }
    }
}
