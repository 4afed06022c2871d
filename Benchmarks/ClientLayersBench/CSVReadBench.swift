// `optolink-client-bench csv-read`: how long a run's `attempts.csv` takes to read back, for
// Benchmarks/csv-read.sh (which runs this mode built from two commits, interleaved).
//
//   optolink-client-bench csv-read --file PATH [--rows 200000]
//
// Writes PATH first when it does not exist: `--rows` attempts as the recorder writes them
// (`CSVStreamWriter.appendRow` + `AttemptRecord.appendCSVRow`), with values like a real run's
// (times in whole microseconds, 1 row in 20 in nanoseconds; 429s with Retry-After, some
// transport errors, correlation ids, client IPs). Then times one
// `ReportCSVReader.attempts(PATH)` and prints one JSON object: rows, bytes, seconds (wall),
// cpuSeconds (this process, the read only).
import Foundation
import OptoLink
import OptoLinkSoak
import SoakRecords
import SoakSupport

/// Realistic `attempts.csv` rows, the same for a given count on every build (fixed seed).
func benchAttempts(_ count: Int) -> [AttemptRecord] {
    var rng = SeededRandom(seed: 20_261_201)
    var clock: Int64 = 0  // nanoseconds
    var records: [AttemptRecord] = []
    records.reserveCapacity(count)
    for index in 0..<count {
        clock += Int64(rng.next() % 60_000)  // ~30 µs apart
        let device = index % 5_000
        let start = clock + Int64(rng.next() % 3_000_000)
        let end = start + 400_000 + Int64(rng.next() % 40_000_000)
        // A run's times are whole microseconds; 1 row in 20 keeps its nanoseconds (shortest exact form).
        let unit: Int64 = rng.next() % 20 == 0 ? 1 : 1_000
        func seconds(_ nanoseconds: Int64) -> Double { Double(nanoseconds / unit * unit) / 1e9 }
        let (intended, actualStart, endTime) = (seconds(clock), seconds(start), seconds(end))
        let roll = rng.next() % 100
        let status: Int? = roll < 2 ? nil : roll < 12 ? 429 : roll < 60 ? 201 : 200
        let endpoint: ContractEndpoint = roll % 3 == 0 ? .match : roll % 3 == 1 ? .events : .session
        records.append(
            AttemptRecord(
                device: "d" + String(repeating: "0", count: 6 - String(device).count) + String(device),
                launch: 1 + Int(rng.next() % 3), callId: UInt64(index / 2), endpoint: endpoint,
                attempt: 1 + Int(rng.next() % 2), intendedStart: intended, actualStart: actualStart, end: endTime,
                status: status, errorKind: status == nil ? .timedOut : nil,
                retryAfterSeconds: status == 429 ? 1 + Int(rng.next() % 30) : nil,
                requestBytes: 280 + Int(rng.next() % 200), responseBytes: status == nil ? 0 : 60 + Int(rng.next() % 90),
                correlationId: "8f1c2d3e-run:d\(device):\(index % 7)", clientIP: "127.0.0.1"))
    }
    return records
}

func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec)
        + Double(usage.ru_stime.tv_usec) / 1e6
}

func csvReadBench(_ arguments: [String]) {
    var options = ["--rows": "200000"]
    var rest = arguments[...]
    while let flag = rest.popFirst() {
        guard ["--file", "--rows"].contains(flag), let value = rest.popFirst() else {
            fail("usage: optolink-client-bench csv-read --file PATH [--rows N]")
        }
        options[flag] = value
    }
    guard let path = options["--file"], let rows = options["--rows"].flatMap(Int.init), rows > 0 else {
        fail("usage: optolink-client-bench csv-read --file PATH [--rows N]")
    }
    let url = URL(fileURLWithPath: path)
    if !FileManager.default.fileExists(atPath: path) {
        do {
            let writer = try CSVStreamWriter(url: url, header: AttemptRecord.csvHeader)
            for record in benchAttempts(rows) { writer.appendRow(record.appendCSVRow(to:)) }
            writer.close()
            if let failure = writer.failure { fail("csv-read: \(failure)") }
        } catch {
            fail("csv-read: cannot write \(path): \(error)")
        }
    }
    let bytes = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    let cpuBefore = cpuSeconds()
    let started = ContinuousClock.now
    let records: [AttemptRecord]
    do {
        records = try ReportCSVReader.attempts(url)
    } catch {
        fail("csv-read: \(error)")
    }
    let elapsed = ContinuousClock.now - started
    let cpu = cpuSeconds() - cpuBefore
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    print(#"{"rows": \#(records.count), "bytes": \#(bytes), "seconds": \#(seconds), "cpuSeconds": \#(cpu)}"#)
}
