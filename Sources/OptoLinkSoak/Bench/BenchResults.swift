/// What `optolink-soak bench` measured (`Benchmarks/results/soak-bench.json`).
public struct BenchResults: Sendable, Codable {
    public struct Memory: Sendable, Codable {
        /// Device counts measured.
        public var devices: [Int]
        /// Resident bytes with that many launched virtual devices alive.
        public var rssBytes: [Int]
        /// (rss[1] − rss[0]) / (devices[1] − devices[0]), bytes per virtual device.
        public var bytesPerDevice: Double
        public var targetBytesPerDevice: Double
        public var pass: Bool
    }

    public struct Throughput: Sendable, Codable {
        /// The route measured (`POST /sdk/events`).
        public var route: String
        public var concurrency: Int
        public var seconds: Double
        /// Full driver: closed model, SDK `trackEvent`, recorder middleware, CSV rows.
        public var driverRequestsPerSecond: Double
        /// Bare URLSession loop, same session settings, same route, same emulator.
        public var bareURLSessionRequestsPerSecond: Double
        /// driver / bare.
        public var ratio: Double
        public var targetRatio: Double
        public var pass: Bool
        /// `wrk` against the same route for reference (`nil` when wrk is not installed).
        public var wrkRequestsPerSecond: Double?
        public var wrkCommand: String?
    }

    public struct StartLag: Sendable, Codable {
        /// Planned arrival rate, journeys/s.
        public var rate: Double
        public var seconds: Double
        public var journeys: Int
        public var lateStarts: Int
        /// Actual − intended start, seconds.
        public var p50: Double
        public var p99: Double
        public var max: Double
        public var targetP99: Double
        public var pass: Bool
    }

    public var soakVersion: String
    public var date: String
    /// `release` or `debug`.
    public var build: String
    public var cores: Int
    public var notes: [String]
    public var memory: Memory?
    public var throughput: Throughput?
    public var startLag: StartLag?
}
