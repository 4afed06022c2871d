/// Writes the Prometheus text exposition format (version 0.0.4): `# HELP` / `# TYPE` lines, then
/// one sample per line, `name{label="value",…} number`.
///
/// Label values escape `\`, `"` and newlines; numbers print as integers when whole, `+Inf` /
/// `-Inf` / `NaN` otherwise as Prometheus parses them.
package struct PrometheusText {
    package enum Kind: String {
        case counter, gauge, histogram
    }

    package private(set) var text = ""

    package init() {}

    /// Starts a metric family.
    package mutating func family(_ name: String, _ kind: Kind, help: String) {
        text += "# HELP \(name) \(Self.escapeHelp(help))\n# TYPE \(name) \(kind.rawValue)\n"
    }

    /// One sample of the current family.
    package mutating func sample(_ name: String, _ labels: [(String, String)] = [], _ value: Double) {
        text += name
        if !labels.isEmpty {
            text += "{" + labels.map { "\($0.0)=\"\(Self.escapeLabel($0.1))\"" }.joined(separator: ",") + "}"
        }
        text += " " + Self.number(value) + "\n"
    }

    /// A histogram's `_bucket` (cumulative, ending with `+Inf`), `_sum` and `_count` samples.
    package mutating func histogram(
        _ name: String, _ labels: [(String, String)], bounds: [Double], cumulative: [UInt64], sum: Double,
        count: UInt64
    ) {
        for (bound, value) in zip(bounds, cumulative) {
            sample(name + "_bucket", labels + [("le", Self.number(bound))], Double(value))
        }
        sample(name + "_bucket", labels + [("le", "+Inf")], Double(count))
        sample(name + "_sum", labels, sum)
        sample(name + "_count", labels, Double(count))
    }

    package static func number(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }

    static func escapeLabel(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(character)
            }
        }
        return out
    }

    static func escapeHelp(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\n", with: "\\n")
    }
}
