import Foundation
import SoakVerdicts

/// Reads how busy the machine is from `/proc`: the 1-minute load average (`/proc/loadavg`) and the
/// CPU time counters of `/proc/stat`'s `cpu` line, whose `steal` column over two readings is the
/// share of CPU time a hypervisor gave to other guests. Where `/proc` is missing (macOS) every
/// figure is `nil`.
package struct MachineLoadReader {
    /// One reading.
    package struct Sample {
        package var loadAverage: Double?
        /// `/proc/stat`'s `cpu` line: user, nice, system, idle, iowait, irq, softirq, steal, … (jiffies).
        package var cpuTimes: [UInt64]?

        package init(loadAverage: Double?, cpuTimes: [UInt64]?) {
            self.loadAverage = loadAverage
            self.cpuTimes = cpuTimes
        }
    }

    /// Where `loadavg` and `stat` are read from (tests point it at files of their own).
    package var procDirectory = "/proc"

    package init(procDirectory: String = "/proc") { self.procDirectory = procDirectory }

    package func sample() -> Sample {
        func read(_ name: String) -> String? {
            try? String(contentsOfFile: procDirectory + "/" + name, encoding: .utf8)
        }
        return Sample(
            loadAverage: read("loadavg").flatMap(Self.loadAverage), cpuTimes: read("stat").flatMap(Self.cpuTimes))
    }

    /// The first field of `/proc/loadavg` (`0.52 0.58 0.59 1/189 12345`).
    package static func loadAverage(_ text: String) -> Double? {
        text.split(separator: " ", maxSplits: 1).first.flatMap { Double($0) }
    }

    /// The counters of the aggregate `cpu` line of `/proc/stat` (not the per-core `cpu0`, `cpu1` …).
    package static func cpuTimes(_ text: String) -> [UInt64]? {
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("cpu ") }) else { return nil }
        let counters = line.split(separator: " ").dropFirst().compactMap { UInt64($0) }
        return counters.count >= 8 ? counters : nil
    }

    /// The steal column's share of all CPU time between two readings (`nil` without both, or
    /// when no time passed).
    package static func stealShare(from start: [UInt64]?, to end: [UInt64]?) -> Double? {
        guard let start, let end, start.count >= 8, end.count >= 8 else { return nil }
        // Guest time (columns 9 and 10) is already counted in user and nice.
        let total = zip(start.prefix(8), end.prefix(8)).reduce(0.0) { $0 + Double($1.1 &- $1.0) }
        guard total > 0 else { return nil }
        return Double(end[7] &- start[7]) / total
    }

    /// The machine's load over a run from its first and last readings.
    package static func load(from start: Sample, to end: Sample) -> SoakSummary.MachineLoad {
        SoakSummary.MachineLoad(
            loadAverageAtStart: start.loadAverage, loadAverageAtEnd: end.loadAverage,
            stealShare: stealShare(from: start.cpuTimes, to: end.cpuTimes))
    }
}
