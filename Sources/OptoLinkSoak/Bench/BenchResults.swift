import Foundation

/// What `optolink-soak bench` measured (`soak-bench.json` in its report directory).
package struct BenchResults: Sendable, Codable {
    package struct Memory: Sendable, Codable {
        /// Device counts measured.
        package var devices: [Int]
        /// Resident bytes with that many launched virtual devices alive.
        package var rssBytes: [Int]
        /// (rss[1] − rss[0]) / (devices[1] − devices[0]), bytes per virtual device.
        package var bytesPerDevice: Double
        package var targetBytesPerDevice: Double
        package var pass: Bool
    }

    package struct Throughput: Sendable, Codable {
        /// The route measured (`POST /sdk/events`).
        package var route: String
        package var concurrency: Int
        package var seconds: Double
        /// Full driver: closed model, SDK `trackEvent`, recorder middleware, CSV rows.
        package var driverRequestsPerSecond: Double
        /// Bare URLSession loop, same session settings, same route, same emulator.
        package var bareURLSessionRequestsPerSecond: Double
        /// driver / bare.
        package var ratio: Double
        package var targetRatio: Double
        package var pass: Bool
        /// `wrk` against the same route for reference (`nil` when wrk is not installed).
        package var wrkRequestsPerSecond: Double?
        package var wrkCommand: String?
    }

    package struct StartLag: Sendable, Codable {
        /// Planned arrival rate, journeys/s.
        package var rate: Double
        package var seconds: Double
        package var journeys: Int
        package var lateStarts: Int
        /// Actual − intended start, seconds.
        package var p50: Double
        package var p99: Double
        package var max: Double
        package var targetP99: Double
        package var pass: Bool
    }

    package var soakVersion: String
    package var date: String
    /// `release` or `debug`.
    package var build: String
    package var cores: Int
    package var notes: [String]
    package var memory: Memory?
    package var throughput: Throughput?
    package var startLag: StartLag?
}

extension BenchResults {
    /// The results as a table for a terminal: one row per measurement with its value, target and
    /// verdict (`PASS`/`FAIL`); memory in KB per device, rates in requests/s, lag in milliseconds.
    package var table: String {
        var rows: [(String, String, String, String)] = [("measurement", "observed", "target", "verdict")]
        func verdict(_ pass: Bool) -> String { pass ? "PASS" : "FAIL" }
        func fixed(_ value: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", value) }
        if let memory {
            let counts = memory.devices.map(String.init).joined(separator: " → ")
            rows.append(
                (
                    "memory per device (\(counts) devices)", "\(fixed(memory.bytesPerDevice / 1024, 1)) KB",
                    "≤ \(fixed(memory.targetBytesPerDevice / 1024, 1)) KB", verdict(memory.pass)
                ))
        }
        if let throughput {
            rows.append(
                (
                    "driver \(throughput.route), \(throughput.concurrency) in flight",
                    "\(fixed(throughput.driverRequestsPerSecond, 0)) req/s", "", ""
                ))
            rows.append(
                ("bare URLSession, same route", "\(fixed(throughput.bareURLSessionRequestsPerSecond, 0)) req/s", "", "")
            )
            rows.append(
                (
                    "driver / bare", fixed(throughput.ratio, 2), "≥ \(fixed(throughput.targetRatio, 2))",
                    verdict(throughput.pass)
                ))
            if let wrk = throughput.wrkRequestsPerSecond {
                rows.append(("wrk, same route (reference)", "\(fixed(wrk, 0)) req/s", "", ""))
            }
        }
        if let lag = startLag {
            rows.append(
                (
                    "start lag p99 at \(fixed(lag.rate, 0)) journeys/s", "\(fixed(lag.p99 * 1000, 2)) ms",
                    "≤ \(fixed(lag.targetP99 * 1000, 2)) ms", verdict(lag.pass)
                ))
            rows.append(("late starts", "\(lag.lateStarts) of \(lag.journeys)", "", ""))
        }
        let widths = (
            rows.map(\.0.count).max() ?? 0, rows.map(\.1.count).max() ?? 0, rows.map(\.2.count).max() ?? 0
        )
        func pad(_ text: String, _ width: Int) -> String { text + String(repeating: " ", count: width - text.count) }
        let header = "optolink-soak \(soakVersion) bench · \(build) build · \(cores) cores · \(date)"
        let lines = rows.map { row in
            [pad(row.0, widths.0), pad(row.1, widths.1), pad(row.2, widths.2), row.3].joined(separator: "  ")
                .trimmingCharacters(in: .whitespaces)
        }
        return ([header] + lines).joined(separator: "\n") + "\n"
    }
}
