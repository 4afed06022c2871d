import Foundation
import SoakSupport
import SoakRecords

extension SoakSummary {
    /// Identity and configuration of one run (`summary.json` `run`).
    public struct RunMetadata: Sendable, Codable {
        /// Unique id of the run (also the report directory's suffix).
        public var runId: String
        /// The profile's `name`.
        public var profile: String
        /// The profile file as given on the command line, when it came from a file.
        public var profilePath: String?
        /// ``OptoLinkSoak/version`` of the tool that wrote the report.
        public var soakVersion: String
        /// Wall-clock start, ISO 8601 in UTC.
        public var startedAt: String
        /// Unix epoch seconds of the run's time 0 (CSV times are relative to it).
        public var startEpoch: Double
        /// Seconds from time 0 to the end of the grace period.
        public var durationSeconds: Double
        /// `true` when SIGINT or SIGTERM ended the run (the report holds what was measured).
        public var interrupted: Bool
        /// `completed`, `duration`, `iterations`, `interrupted`, `deadline`.
        public var stopReason: StopReason
        /// `embedded` or `remote`.
        public var backend: String
        /// The backend's base URL (the embedded emulator's loopback address when `backend` is `embedded`).
        public var baseURL: String
        /// `open` (arrival rate) or `closed` (devices loop).
        public var loadModel: String
        /// Number of virtual devices.
        public var devices: Int
        /// Seed of the plan: device attributes, journey choice and think times.
        public var seed: UInt64
        /// SHA-256 of the effective profile without its pass/fail sections (``ProfileFingerprint``):
        /// `compare` refuses runs whose fingerprints differ. Absent in reports of older versions.
        public var profileHash: String? = nil
        /// The HTTP stack the SDK's requests went through: `native` or `urlsession` (absent in
        /// reports written before the native transport existed).
        public var transport: String? = nil
        /// How an `https://` backend's certificate was checked on the native transport:
        /// `verified`, `verified (+ --cacert FILE)` or `NOT VERIFIED (--insecure)`; absent for
        /// `http://`, URLSession and reports of older versions.
        public var tls: String? = nil
        /// Set when the report is one shard of a plan (`run --shard`) or a merge of shards
        /// (`merge`, `run --processes`); absent for a plain run.
        package var shards: Sharding? = nil
        /// How far the recording fell behind the requests (absent when the run recorded inline,
        /// and in reports of older versions).
        public var recording: RecordingLag? = nil
        /// The generator's CPU use while it drove the journeys (absent in merged reports and in
        /// reports of older versions).
        package var generator: GeneratorUse? = nil
        /// How busy the machine was around the run (absent in merged reports and in reports of
        /// older versions).
        package var machine: MachineLoad? = nil

        /// A value with every stored property given (the memberwise initializer, for other targets).
        package init(
            runId: String,
            profile: String,
            profilePath: String? = nil,
            soakVersion: String,
            startedAt: String,
            startEpoch: Double,
            durationSeconds: Double,
            interrupted: Bool,
            stopReason: StopReason,
            backend: String,
            baseURL: String,
            loadModel: String,
            devices: Int,
            seed: UInt64,
            profileHash: String? = nil,
            transport: String? = nil,
            tls: String? = nil,
            shards: Sharding? = nil,
            recording: RecordingLag? = nil
        ) {
            self.runId = runId
            self.profile = profile
            self.profilePath = profilePath
            self.soakVersion = soakVersion
            self.startedAt = startedAt
            self.startEpoch = startEpoch
            self.durationSeconds = durationSeconds
            self.interrupted = interrupted
            self.stopReason = stopReason
            self.backend = backend
            self.baseURL = baseURL
            self.loadModel = loadModel
            self.devices = devices
            self.seed = seed
            self.profileHash = profileHash
            self.transport = transport
            self.tls = tls
            self.shards = shards
            self.recording = recording
        }
    }

    /// The recorder's writer thread in one run: attempts and calls are applied there, after the
    /// requests, so the live figures lag by the events waiting.
    public struct RecordingLag: Sendable, Codable, Equatable {
        /// The most attempt and call events that waited at once to be applied.
        public var backlogPeak: Int
        /// Seconds it took, once the run ended, to apply what was still waiting.
        public var drainSeconds: Double

        public init(backlogPeak: Int, drainSeconds: Double) {
            self.backlogPeak = backlogPeak
            self.drainSeconds = drainSeconds
        }
    }

    /// How a report relates to the shards of its plan.
    package struct Sharding: Sendable, Codable, Equatable {
        /// Shards the plan was split into.
        package var count: Int
        /// A shard's report: its 0-based index. `nil` in a merged report.
        package var index: Int?
        /// The shared start (`--start-at`), Unix seconds, when one was given.
        package var startAt: Double?
        /// A shard's report: seconds it started after `startAt` (its journeys planned before
        /// then started late and count as late starts).
        package var lateSeconds: Double?
        /// A merged report: the shard indexes merged, ascending.
        package var merged: [Int]?
        /// A merged report: the shard indexes that were missing (`merge --allow-partial`).
        package var missing: [Int]?
        /// A merged report: whether the records were streamed in time order from the shards'
        /// CSVs (`true`), or sorted in memory because a shard's rows were too far out of order.
        package var streamed: Bool?
        /// A merged report: the reorder window the streamed records needed, seconds (rows of a
        /// shard lag behind each other by up to this much in its CSVs).
        package var reorderWindowSeconds: Double?
        /// A shard's report: the part of the plan it ran (``ShardSlice``). `nil` in a merged report.
        package var slice: ShardSlice?

        package init(count: Int, index: Int? = nil) {
            self.count = count
            self.index = index
        }
    }
}
