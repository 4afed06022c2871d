import Foundation
import OptoLink
import Testing

import OptoLinkSoak
import SoakRecords
import SoakVerdicts

/// Attribution accuracy against the emulator's match ladder: devices click (or not) in a
/// browser, then launch with the real SDK; the verdict compares what each clicked with the
/// deferred link its SDK emitted.
@Suite(.timeLimit(.minutes(1)))
struct VerdictAttributionIntegrationTests {
    struct Device {
        var index: Int
        var ip: String
        var clicked: (code: String, linkId: String)?
        var clipboardSurvives = false
        var sharedNAT = false
        var info = OptoLinkDeviceInfo(osVersion: "18.1", deviceModel: "iPhone", language: "en-US")
    }

    static let welcome = (code: "welcome", linkId: "lnk_welcome")
    static let promo = (code: "promo", linkId: "lnk_promo")

    @Test func sharedNATMisattributionIsCaughtByMethod() async throws {
        let run = try VerdictRun()
        let devices = [
            Device(index: 1, ip: "10.2.0.1", clicked: Self.welcome, clipboardSurvives: true),  // CLIPBOARD
            Device(index: 2, ip: "10.2.0.2", clicked: Self.promo),  // FINGERPRINT_EXACT
            // One NAT: d4 never clicked and has another OS and language, yet scores on d3's click.
            Device(
                index: 4, ip: "10.9.9.9", sharedNAT: true,
                info: OptoLinkDeviceInfo(osVersion: "17.5", deviceModel: "iPhone", language: "de-DE")),
            Device(index: 3, ip: "10.9.9.9", clicked: Self.welcome, sharedNAT: true),
            // Another NAT, identical fingerprints: the newest click goes to whoever launches first.
            Device(index: 6, ip: "10.9.9.8", clicked: Self.promo, sharedNAT: true),
            Device(index: 7, ip: "10.9.9.8", clicked: Self.welcome, sharedNAT: true),
            Device(index: 5, ip: "10.2.0.5"),  // organic
        ]
        var clipboards: [Int: String] = [:]
        for device in devices.sorted(by: { $0.index < $1.index }) {
            if let clicked = device.clicked { clipboards[device.index] = try run.click(clicked.code, ip: device.ip) }
        }
        var records: [AttributionRecord] = []
        for device in devices {  // launch order as listed
            let instance = run.device(
                device.index, ip: device.ip, clipboard: device.clipboardSurvives ? clipboards[device.index] : nil,
                deviceInfo: device.info)
            await instance.start()
            await instance.waitForBackgroundWork()
            let emitted = await VerdictRun.emittedLink(instance)
            records.append(
                AttributionRecord(
                    device: VerdictRun.deviceName(device.index), clickedLinkId: device.clicked?.linkId,
                    emittedLinkId: emitted?.linkId, matchMethod: emitted?.matchMethod.rawValue,
                    sharedNAT: device.sharedNAT))
        }
        let verdict = AttributionVerdict.evaluate(records)
        #expect(verdict.overall.correct == 2)
        #expect(verdict.overall.wrongLink == 2)
        #expect(verdict.overall.falsePositive == 1)
        #expect(verdict.overall.missed == 1)
        #expect(verdict.overall.organic == 1)
        #expect(verdict.byMethod["CLIPBOARD"]?.correct == 1)
        #expect(verdict.byMethod["FINGERPRINT_EXACT"]?.correct == 1)
        #expect(verdict.byMethod["FINGERPRINT_EXACT"]?.wrongLink == 2)
        #expect(verdict.byMethod["FINGERPRINT_SCORED"]?.falsePositive == 1)
        #expect(verdict.sharedNAT.devices == 4)
        #expect(verdict.sharedNAT.correct == 0)
        #expect(verdict.ownIP.correctRate == 1)
        #expect(verdict.overall.correctRate == 2.0 / 5.0)
    }
}
