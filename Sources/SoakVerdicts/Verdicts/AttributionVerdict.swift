import SoakRecords

/// Attribution accuracy: the link each virtual device clicked before install against the
/// deferred link its SDK emitted on first launch (docs/CONTRACT.md §2, "Deferred match").
///
/// **Correct**: emitted the clicked link. **Wrong link**: emitted another link. **Missed**:
/// clicked, nothing emitted. **False positive**: emitted a link without any click. **Organic**:
/// no click, nothing emitted (correct too, but not in the rate). Broken down by match method
/// (`NONE` when nothing was emitted) and by whether the device sat behind the shared NAT IP.
package struct AttributionVerdict: Verdict {
    /// Outcome counts of one group of devices.
    package struct Counts: Sendable, Codable, Equatable {
        package var devices = 0
        package var correct = 0
        package var wrongLink = 0
        package var missed = 0
        package var falsePositive = 0
        package var organic = 0

        package init() {}

        /// `correct / devices that clicked`, or `nil` when none clicked.
        package var correctRate: Double? {
            let clicked = correct + wrongLink + missed
            return clicked == 0 ? nil : Double(correct) / Double(clicked)
        }

        /// `correct / links emitted`, or `nil` when none were emitted.
        package var precision: Double? {
            let emitted = correct + wrongLink + falsePositive
            return emitted == 0 ? nil : Double(correct) / Double(emitted)
        }

        mutating func record(_ record: AttributionRecord) {
            devices += 1
            switch (record.clickedLinkId, record.emittedLinkId) {
            case (nil, nil): organic += 1
            case (nil, _?): falsePositive += 1
            case (_?, nil): missed += 1
            case (let clicked?, let emitted?): if clicked == emitted { correct += 1 } else { wrongLink += 1 }
            }
        }

        func addMetrics(prefix: String, to metrics: inout [String: Double]) {
            metrics["\(prefix).devices"] = Double(devices)
            metrics["\(prefix).correct"] = Double(correct)
            metrics["\(prefix).wrong_link"] = Double(wrongLink)
            metrics["\(prefix).missed"] = Double(missed)
            metrics["\(prefix).false_positive"] = Double(falsePositive)
            metrics["\(prefix).organic"] = Double(organic)
            if let correctRate { metrics["\(prefix).correct_rate"] = correctRate }
            if let precision { metrics["\(prefix).precision"] = precision }
        }
    }

    package var overall: Counts
    /// Match method (`CLIPBOARD`, `FINGERPRINT_EXACT`, …, `NONE`) → counts.
    package var byMethod: [String: Counts]
    /// Devices behind the shared NAT IP.
    package var sharedNAT: Counts
    /// Devices with their own IP.
    package var ownIP: Counts

    package static func evaluate(_ records: [AttributionRecord]) -> AttributionVerdict {
        Verdicts.run(Self.self, attribution: records, context: VerdictContext())
    }

    package static let key = "attribution"

    /// Every match method the contract knows (docs/CONTRACT.md, `/match`'s `matchMethod`), as on the
    /// wire; `UNKNOWN` counts a method the SDK reported that is not one. Listed from the contract,
    /// not taken from the SDK it judges.
    package static let methods = [
        "CLIPBOARD", "INSTALL_REFERRER", "FINGERPRINT_EXACT", "FINGERPRINT_SCORED", "IP_FUZZY", "DIRECT", "NONE",
    ]

    static let countNames = ["devices", "correct", "wrong_link", "missed", "false_positive", "organic"]
    static let rateNames = ["correct_rate", "precision"]

    package static var metricPatterns: [MetricPattern] {
        let groups = MetricPatternPart.oneOf(["shared_nat", "own_ip"])
        let methods = MetricPatternPart.oneOf(methods + ["UNKNOWN"])
        return [
            MetricPattern("attribution", .oneOf(countNames)),
            MetricPattern("attribution", .oneOf(rateNames), unit: .ratio),
            MetricPattern("attribution", groups, .oneOf(countNames)),
            MetricPattern("attribution", groups, .oneOf(rateNames), unit: .ratio),
            MetricPattern("attribution", "method", methods, .oneOf(countNames)),
            MetricPattern("attribution", "method", methods, .oneOf(rateNames), unit: .ratio),
        ]
    }

    package static func makePass(_ context: VerdictContext) -> Pass { Pass() }

    package var notExercised: [String: String] {
        overall.devices == 0 ? ["attribution": "no first launch ran the deferred match"] : [:]
    }

    /// Counts each first launch's outcome as it comes.
    package struct Pass: VerdictPass {
        var overall = Counts()
        var byMethod: [String: Counts] = [:]
        var shared = Counts()
        var own = Counts()

        package mutating func consume(_ record: RunRecord) {
            guard case .attribution(let record) = record else { return }
            overall.record(record)
            let method = record.emittedLinkId == nil ? "NONE" : (record.matchMethod ?? "UNKNOWN")
            byMethod[method, default: Counts()].record(record)
            if record.sharedNAT { shared.record(record) } else { own.record(record) }
        }

        package mutating func finish() -> AttributionVerdict {
            AttributionVerdict(overall: overall, byMethod: byMethod, sharedNAT: shared, ownIP: own)
        }
    }

    package func addMetrics(to metrics: inout [String: Double]) {
        guard overall.devices > 0 else { return }
        overall.addMetrics(prefix: "attribution", to: &metrics)
        for (method, counts) in byMethod { counts.addMetrics(prefix: "attribution.method.\(method)", to: &metrics) }
        sharedNAT.addMetrics(prefix: "attribution.shared_nat", to: &metrics)
        ownIP.addMetrics(prefix: "attribution.own_ip", to: &metrics)
    }
}
