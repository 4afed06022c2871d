import OptoLinkStaging
import Synchronization
import SoakRecords
import SoakVerdicts

/// Samples the process's resident memory every `every` seconds (bounded: at most 2,000
/// samples kept; beyond that every other sample is dropped and the interval doubles), so
/// slow leaks in a long soak are visible in `summary.json`.
package final class RSSSampler: Sendable {
    private struct State {
        var samples: [SoakSummary.RSSSample] = []
        var interval: Double
    }

    let timeline: RunTimeline
    private let state: Mutex<State>
    /// What the embedded emulator holds, sampled with each RSS reading (`nil`: no emulator).
    let emulator: (@Sendable () -> EmulatorRetained?)?

    /// Whether each reading first returns glibc's free heap pages to the kernel.
    package let trims: Bool

    package init(
        timeline: RunTimeline, every seconds: Double, emulator: (@Sendable () -> EmulatorRetained?)? = nil,
        trims: Bool = true
    ) {
        self.trims = trims
        self.timeline = timeline
        self.state = Mutex(State(interval: seconds))
        self.emulator = emulator
    }

    package var samples: [SoakSummary.RSSSample] { state.withLock { $0.samples } }

    /// Takes one reading, after handing the allocator's free pages back (see
    /// ``ProcessMemory/releaseFreeHeap()``) when `trims` is on.
    package func sample() {
        if trims { ProcessMemory.releaseFreeHeap() }
        guard let bytes = ProcessMemory.residentBytes() else { return }
        let t = timeline.now()
        state.withLock { s in
            s.samples.append(.init(t: t, bytes: bytes, emulator: emulator?()))
            if s.samples.count > 2000 {
                s.samples = s.samples.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)
                s.interval *= 2
            }
        }
    }

    /// Samples until cancelled (one sample at start, one at the end).
    func run(clock: any Clock<Duration>) async {
        sample()
        while !Task.isCancelled {
            let interval = state.withLock { $0.interval }
            do {
                try await clock.sleep(for: .nanoseconds(Int64(interval * 1e9)), tolerance: nil)
            } catch {
                break
            }
            sample()
        }
        sample()
    }
}
