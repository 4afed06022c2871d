import Foundation
import OptoLinkHTTP
import SoakVerdicts

extension SoakRecorder {
    /// The writer's nice value. Beside hey on 2 saturated cores, nice 0, 5 and 10 give the same
    /// request rate within the noise, but at 10 the starved writer lets 90k–145k events wait in
    /// a 6 s run, at 0 about 500, at 5 10k–26k: 5 lets a burst of requests go first and still
    /// keeps up.
    static let writerNice: Int32 = 5

    /// Applies the recorded events on a thread of their own, at low priority, so a
    /// request thread only appends to a queue instead of waiting for the consumers (the CSV rows,
    /// the verdicts' passes, the aggregates: in a busy run they cost several times the request itself).
    /// Live readers (progress, metrics, early stop) see the state as applied so far: at most a
    /// few milliseconds behind while the writer keeps up (it naps 1–8 ms when the queue is empty).
    ///
    /// - Parameter backlogLimit: events that may wait; past it, each recording thread applies a
    ///   batch itself before it goes on, so memory stays bounded (a few hundred bytes per event,
    ///   its request and response bodies included).
    /// - Throws: when the thread cannot be started (the recorder then applies events inline, as
    ///   without a writer).
    package func startWriter(backlogLimit: Int = 100_000) throws {
        try writer.withLock { w in
            guard w == nil else { return }
            writerStop.store(false, ordering: .releasing)
            queue.withLock { q in
                q.writerRunning = true
                q.backlogLimit = Swift.max(1, backlogLimit)
            }
            do {
                let thread = try LowPriorityThread.start(name: "opl-recorder", nice: Self.writerNice) { [self] in
                    // Naps of 1 ms while events come, doubling to 8 ms while none do: an idle
                    // run wakes the writer about 125 times a second, a busy one finds a batch.
                    var nap: UInt32 = 1_000
                    while true {
                        let stopping = writerStop.load(ordering: .acquiring)
                        if applySome(limit: 256) > 0 {
                            nap = 1_000
                        } else {
                            if stopping { return }
                            usleep(nap)
                            nap = Swift.min(nap * 2, 8_000)
                        }
                    }
                }
                w = thread
            } catch {
                queue.withLock { $0.writerRunning = false }
                throw error
            }
        }
    }

    /// Stops the writer: recording threads apply their events themselves again, and the writer
    /// applies what was queued before it exits. Measures how long that took (``recordingLag``).
    func stopWriter() {
        let taken = writer.withLock { w in
            let running = w
            w = nil
            return running
        }
        guard let running = taken else { return }
        let stoppedAt = ContinuousClock.now
        queue.withLock { $0.writerRunning = false }
        writerStop.store(true, ordering: .releasing)
        running.join()
        let drained = ContinuousClock.now - stoppedAt
        drainSeconds.withLock {
            $0 = Double(drained.components.seconds) + Double(drained.components.attoseconds) * 1e-18
        }
    }

    /// How far the writer fell behind in this run, or `nil` when it ran without one.
    package var recordingLag: SoakSummary.RecordingLag? {
        guard let drain = drainSeconds.withLock({ $0 }) else { return nil }
        return SoakSummary.RecordingLag(backlogPeak: queue.withLock { $0.backlogPeak }, drainSeconds: drain)
    }
}
