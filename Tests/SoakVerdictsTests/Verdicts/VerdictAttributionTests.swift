import Testing

import SoakRecords
import SoakVerdicts

@Suite struct VerdictAttributionTests {
    @Test func classifiesEveryDevice() throws {
        let records = [
            AttributionRecord(
                device: "d1", clickedLinkId: "lnk_welcome", emittedLinkId: "lnk_welcome", matchMethod: "CLIPBOARD",
                sharedNAT: false),
            AttributionRecord(
                device: "d2", clickedLinkId: "lnk_welcome", emittedLinkId: "lnk_promo", matchMethod: "IP_FUZZY",
                sharedNAT: true),
            AttributionRecord(
                device: "d3", clickedLinkId: "lnk_promo", emittedLinkId: "lnk_promo", matchMethod: "IP_FUZZY",
                sharedNAT: true),
            AttributionRecord(
                device: "d4", clickedLinkId: "lnk_promo", emittedLinkId: nil, matchMethod: nil, sharedNAT: false),
            AttributionRecord(
                device: "d5", clickedLinkId: nil, emittedLinkId: "lnk_promo", matchMethod: "IP_FUZZY", sharedNAT: true),
            AttributionRecord(device: "d6", clickedLinkId: nil, emittedLinkId: nil, matchMethod: nil, sharedNAT: false),
        ]
        let verdict = AttributionVerdict.evaluate(records)
        #expect(verdict.overall.devices == 6)
        #expect(verdict.overall.correct == 2)
        #expect(verdict.overall.wrongLink == 1)
        #expect(verdict.overall.missed == 1)
        #expect(verdict.overall.falsePositive == 1)
        #expect(verdict.overall.organic == 1)
        #expect(verdict.overall.correctRate == 0.5)
        #expect(verdict.overall.precision == 0.5)
        let fuzzy = try #require(verdict.byMethod["IP_FUZZY"])
        #expect(fuzzy.correct == 1)
        #expect(fuzzy.wrongLink == 1)
        #expect(fuzzy.falsePositive == 1)
        #expect(verdict.byMethod["NONE"]?.missed == 1)
        #expect(verdict.byMethod["NONE"]?.organic == 1)
        #expect(verdict.sharedNAT.devices == 3)
        #expect(verdict.sharedNAT.correctRate == 0.5)
        #expect(verdict.ownIP.correctRate == 0.5)

        let metrics = VerdictsReport(
            backoff: VerdictsReport.empty().backoff, retries: VerdictsReport.empty().retries,
            reconciliation: VerdictsReport.empty().reconciliation, limits: VerdictsReport.empty().limits,
            attribution: verdict
        ).metrics()
        #expect(metrics["attribution.correct_rate"] == 0.5)
        #expect(metrics["attribution.false_positive"] == 1)
        #expect(metrics["attribution.method.IP_FUZZY.wrong_link"] == 1)
        #expect(metrics["attribution.shared_nat.correct"] == 1)
    }

    @Test func noClicksMeansNoRateMetric() {
        let records = [
            AttributionRecord(device: "d1", clickedLinkId: nil, emittedLinkId: nil, matchMethod: nil, sharedNAT: false)
        ]
        let verdict = AttributionVerdict.evaluate(records)
        #expect(verdict.overall.correctRate == nil)
        #expect(VerdictsReport.empty().metrics()["attribution.correct_rate"] == nil)
    }
}
