import Foundation
import OptoLinkSoak
import Testing

/// Reading the machine's load from `/proc`: the load average's first field, the aggregate `cpu`
/// line of `/proc/stat`, and the steal share between two readings.
@Suite("machine load from /proc")
struct MachineLoadReaderTests {
    static let stat = """
        cpu  4705 356 584 3699 23 0 12 120 0 0
        cpu0 1393 280 283 1849 11 0 7 60 0 0
        intr 114930548 113199788 3 0 5 263 0 4 [...]
        """

    @Test("the fields are parsed, and a line that is not the aggregate cpu line is ignored")
    func parses() {
        #expect(MachineLoadReader.loadAverage("0.52 0.58 0.59 1/189 12345\n") == 0.52)
        #expect(MachineLoadReader.loadAverage("") == nil)
        #expect(MachineLoadReader.cpuTimes(Self.stat) == [4705, 356, 584, 3699, 23, 0, 12, 120, 0, 0])
        #expect(MachineLoadReader.cpuTimes("cpu0 1 2 3 4 5 6 7 8\n") == nil)
        #expect(MachineLoadReader.cpuTimes("cpu  1 2 3\n") == nil, "too few columns")
    }

    @Test("steal share: the steal column's part of all CPU time between two readings")
    func stealShare() {
        let start: [UInt64] = [100, 0, 100, 700, 0, 0, 0, 100]
        let end: [UInt64] = [200, 0, 200, 1300, 0, 0, 0, 300]  // 1,000 jiffies, 200 of them stolen
        #expect(MachineLoadReader.stealShare(from: start, to: end) == 0.2)
        #expect(MachineLoadReader.stealShare(from: start, to: start) == nil, "no time passed")
        #expect(MachineLoadReader.stealShare(from: nil, to: end) == nil)
    }

    @Test("a reading from files, and a directory without them gives no figures")
    func readsFiles() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("proc-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try "1.25 0.80 0.50 2/300 999\n".write(
            to: directory.appendingPathComponent("loadavg"), atomically: true, encoding: .utf8)
        try Self.stat.write(to: directory.appendingPathComponent("stat"), atomically: true, encoding: .utf8)
        let sample = MachineLoadReader(procDirectory: directory.path).sample()
        #expect(sample.loadAverage == 1.25 && sample.cpuTimes?.count == 10)
        let none = MachineLoadReader(procDirectory: directory.appendingPathComponent("missing").path).sample()
        #expect(none.loadAverage == nil && none.cpuTimes == nil)
        let load = MachineLoadReader.load(
            from: MachineLoadReader.Sample(loadAverage: 0.5, cpuTimes: nil), to: sample)
        #expect(load.loadAverageAtStart == 0.5 && load.loadAverageAtEnd == 1.25 && load.stealShare == nil)
        #expect(load.peakLoadAverage == 1.25)
    }
}
