import Foundation
import SoakSupport
import SoakRecords

extension SoakSummary {
    package struct Interval: Sendable, Codable, Equatable {
        /// Interval start, seconds since run start.
        package var t: Double
        /// Journeys started in the interval, and those started late.
        package var journeys: Int
        package var lateStarts: Int
        /// Arrivals planned in the interval that never started (0 in the closed model).
        package var dropped: Int? = nil
        /// Attempts that started in the interval, their 429s and errors (5xx + no response).
        package var attempts: Int
        package var status429: Int
        package var errors: Int
        /// Mean and max of `end − intended_start` of those attempts, seconds.
        package var meanLatencyFromIntended: Double
        package var maxLatencyFromIntended: Double
        /// Resident bytes of the soak process at the interval's last RSS sample (absent when
        /// no sample fell in it).
        package var rssBytes: Int? = nil

        /// A value with every stored property given (the memberwise initializer, for other targets).
        package init(
            t: Double,
            journeys: Int,
            lateStarts: Int,
            dropped: Int? = nil,
            attempts: Int,
            status429: Int,
            errors: Int,
            meanLatencyFromIntended: Double,
            maxLatencyFromIntended: Double,
            rssBytes: Int? = nil
        ) {
            self.t = t
            self.journeys = journeys
            self.lateStarts = lateStarts
            self.dropped = dropped
            self.attempts = attempts
            self.status429 = status429
            self.errors = errors
            self.meanLatencyFromIntended = meanLatencyFromIntended
            self.maxLatencyFromIntended = maxLatencyFromIntended
            self.rssBytes = rssBytes
        }
    }

    package struct RSSSample: Sendable, Codable, Equatable {
        /// Seconds since run start.
        package var t: Double
        /// Resident bytes of the soak process (`VmRSS`).
        package var bytes: Int
        /// With the embedded emulator: what it held at that moment (absent otherwise).
        package var emulator: EmulatorRetained? = nil

        /// A value with every stored property given (the memberwise initializer, for other targets).
        package init(
            t: Double,
            bytes: Int,
            emulator: EmulatorRetained? = nil
        ) {
            self.t = t
            self.bytes = bytes
            self.emulator = emulator
        }
    }

    package struct ServerSummary: Sendable, Codable {
        /// The emulator's request counters, verbatim.
        package var counters: JSONValue?
        package var ledgerEntries: Int?

        /// A value with every stored property given (the memberwise initializer, for other targets).
        package init(
            counters: JSONValue? = nil,
            ledgerEntries: Int? = nil
        ) {
            self.counters = counters
            self.ledgerEntries = ledgerEntries
        }
    }
}
