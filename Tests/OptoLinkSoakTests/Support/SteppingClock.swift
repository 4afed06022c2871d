import Foundation
import OptoLinkTestSupport
import Synchronization

/// A virtual clock for whole runs: time stands still while any task works, and jumps to the
/// earliest sleeper's deadline once every task is asleep on it.
///
/// "Every task is asleep" is seen as no clock activity (a sleep registered or ended, a
/// ``touch()`` by a test backend) over three rounds of scheduler yields and 0.3 ms of real
/// time. On a loaded machine a runnable task may miss that window; tests therefore assert
/// exact numbers only where the code under test reads this clock to enforce them. The clock never jumps past a registered sleeper, so a watchdog asleep on it
/// wakes at its exact deadline; a task that was still busy when time jumped only sees its
/// own next event happen later, never earlier. Run ``drive()`` in a task beside the code under
/// test and cancel it afterwards.
final class SteppingClock: Clock, Sendable {
    typealias Instant = VirtualInstant

    private struct Sleeper {
        let deadline: VirtualInstant
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = VirtualInstant()
        var sleepers: [UInt64: Sleeper] = [:]
        var nextId: UInt64 = 0
        var activity: UInt64 = 0
        /// Real I/O in flight (``holding(_:)``): time stands still until it ends.
        var held = 0
    }

    private let state = Mutex(State())

    var now: VirtualInstant { state.withLock { $0.now } }
    var minimumResolution: Duration { .zero }

    /// Seconds since the clock was created.
    var seconds: Double {
        let offset = now.offset.components
        return Double(offset.seconds) + Double(offset.attoseconds) / 1e18
    }

    func sleep(until deadline: VirtualInstant, tolerance: Duration? = nil) async throws {
        let id = state.withLock { s in
            s.nextId += 1
            s.activity += 1
            return s.nextId
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Outcome { case wait, resume, cancel }
                let outcome = state.withLock { s -> Outcome in
                    if Task.isCancelled { return .cancel }
                    if deadline <= s.now { return .resume }
                    s.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return .wait
                }
                switch outcome {
                case .wait: break
                case .resume: continuation.resume()
                case .cancel: continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            let sleeper = state.withLock { s -> Sleeper? in
                s.activity += 1
                return s.sleepers.removeValue(forKey: id)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Notes activity that is not a sleep (a request reaching a test backend).
    func touch() {
        state.withLock { $0.activity += 1 }
    }

    /// Runs `body` (real I/O: a request over a socket) with time held still, so no deadline
    /// and no other sleeper can fire while it is in flight: I/O takes no virtual time.
    func holding<T>(_ body: () async throws -> T) async rethrows -> T {
        state.withLock { s in
            s.held += 1
            s.activity += 1
        }
        defer {
            state.withLock { s in
                s.held -= 1
                s.activity += 1
            }
        }
        return try await body()
    }

    /// Advances time whenever everything is asleep, until cancelled.
    func drive() async {
        while !Task.isCancelled {
            let before = state.withLock { $0.activity }
            var quiet = true
            for _ in 0..<3 {
                for _ in 0..<10 { await Task.yield() }
                try? await Task.sleep(for: .microseconds(300))
                if state.withLock({ $0.activity }) != before {
                    quiet = false
                    break
                }
            }
            if quiet { advanceToNextDeadline() }
        }
    }

    /// Moves time to the earliest sleeper's deadline and wakes every sleeper due then.
    private func advanceToNextDeadline() {
        let due = state.withLock { s -> [Sleeper] in
            guard s.held == 0, let next = s.sleepers.values.map(\.deadline).min() else { return [] }
            s.now = Swift.max(s.now, next)
            let due = s.sleepers.filter { $0.value.deadline <= s.now }
            for id in due.keys { s.sleepers.removeValue(forKey: id) }
            s.activity += 1
            return Array(due.values)
        }
        for sleeper in due { sleeper.continuation.resume() }
    }
}
