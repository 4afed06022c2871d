import CEpoll
import Dispatch
import OptoLinkHTTP
import Synchronization

/// A task executor on a thread of its own that also keeps time: tasks that prefer it run their
/// jobs on its thread, and ``sleep(nanoseconds:)`` wakes them there at their deadline.
///
/// It exists for the open model's arrival schedule, which sleeps until every planned journey
/// start (thousands a second). A sleep on `ContinuousClock` goes through Dispatch: a timer on
/// its manager thread (`timerfd_settime`), then a hand-off to a worker thread of the global pool
/// (`sem_post`, a futex wake) before the sleeping task runs again: three threads and two wake-ups
/// per arrival, about a fifth of the driver's CPU at 5,000 journeys/s. Here the sleeping task's
/// own thread waits for the deadline (one timed futex wait)
/// and runs the task on return: one thread, one wake-up.
///
/// Deadlines are read on the kernel clock `ContinuousClock` uses (``ContinuousNanoseconds``);
/// the wait itself is a `DispatchSemaphore` timed wait, which blocks the calling thread only.
/// After ``shutdown()``, jobs run on the global pool and ``sleep(nanoseconds:)`` returns `false`
/// at once, so a caller falls back to its clock.
package final class PacingExecutor: TaskExecutor, Sendable {
    private struct State {
        var jobs: [UnownedJob] = []
        var timers = TimerHeap<Sleeper>()
        /// Set by the thread while it may block; whoever clears it signals ``wakeup``.
        var parked = false
        var stopping = false
    }

    /// One sleep: its continuation once attached, resumed exactly once (deadline, cancellation or
    /// shutdown, whichever comes first).
    private final class Sleeper: Sendable {
        private enum Phase {
            case pending
            case waiting(UnsafeContinuation<Void, Never>)
            case done
        }
        private let phase = Mutex(Phase.pending)

        /// Attaches the sleeping task; `false` when the sleep already ended (cancelled first).
        func attach(_ continuation: UnsafeContinuation<Void, Never>) -> Bool {
            phase.withLock { phase in
                guard case .pending = phase else { return false }
                phase = .waiting(continuation)
                return true
            }
        }

        /// Ends the sleep: resumes the task if it is attached; later calls do nothing.
        func wake() {
            let continuation = phase.withLock { phase -> UnsafeContinuation<Void, Never>? in
                defer { phase = .done }
                if case .waiting(let continuation) = phase { return continuation }
                return nil
            }
            continuation?.resume()
        }
    }

    private let state = Mutex(State())
    private let wakeup = DispatchSemaphore(value: 0)
    private let thread = Mutex<LoopThread.Handle?>(nil)

    /// Starts the executor's thread, named `name` (at most 15 bytes show in `top -H`), at the
    /// priority of the thread that creates it.
    ///
    /// - Throws: ``HTTPServerError/systemCall(_:errno:)`` when the thread cannot be created.
    package init(name: String) throws {
        let started = try LoopThread.spawn { [self] in
            cepoll_set_thread_name(name)
            run()
        }
        thread.withLock { $0 = started }
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let signal = state.withLock { s -> Bool? in
            guard !s.stopping else { return nil }
            s.jobs.append(job)
            return unpark(&s)
        }
        switch signal {
        case .none: globalConcurrentExecutor.enqueue(job)
        case .some(true): wakeup.signal()
        case .some(false): break
        }
    }

    /// Suspends the calling task for `nanoseconds` (at least until then, on the kernel clock
    /// `ContinuousClock` reads) and resumes it on this executor's thread if it prefers this
    /// executor. Returns early when the task is cancelled.
    ///
    /// - Returns: `false` without sleeping when the executor has shut down (sleep on a clock
    ///   instead), else `true`.
    package func sleep(nanoseconds: Int64) async -> Bool {
        let deadline = ContinuousNanoseconds.now() &+ Swift.max(0, nanoseconds)
        let sleeper = Sleeper()
        var accepted = true
        await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
                guard sleeper.attach(continuation) else {
                    continuation.resume()
                    return
                }
                let signal = state.withLock { s -> Bool? in
                    guard !s.stopping else { return nil }
                    s.timers.schedule(at: UInt64(Swift.max(0, deadline)), sleeper)
                    return unpark(&s)
                }
                switch signal {
                case .none:
                    accepted = false
                    sleeper.wake()
                case .some(true): wakeup.signal()
                case .some(false): break
                }
            }
        } onCancel: {
            sleeper.wake()
        }
        return accepted
    }

    /// Stops the thread once it has run the jobs queued so far and waits until it has exited;
    /// sleepers still waiting are woken. Later jobs run on the global pool. Safe from any task,
    /// one that prefers this executor included (the join runs in a detached task).
    package func shutdown() async {
        let running = thread.withLock { t -> LoopThread.Handle? in
            defer { t = nil }
            return t
        }
        guard let running else { return }
        state.withLock { $0.stopping = true }
        wakeup.signal()
        await Task.detached { LoopThread.join(running) }.value
    }

    /// Clears `parked`; `true` when it was set (the caller must signal ``wakeup``).
    private func unpark(_ s: inout State) -> Bool {
        defer { s.parked = false }
        return s.parked
    }

    private func run() {
        var due: [Sleeper] = []
        var jobs: [UnownedJob] = []
        while true {
            let now = UInt64(Swift.max(0, ContinuousNanoseconds.now()))
            let (next, stopping) = state.withLock { s -> (UInt64?, Bool) in
                while let entry = s.timers.popDue(now: now) { due.append(entry.payload) }
                swap(&jobs, &s.jobs)
                if s.stopping {
                    while let entry = s.timers.popDue(now: .max) { due.append(entry.payload) }
                }
                if jobs.isEmpty && due.isEmpty && !s.stopping { s.parked = true }
                return (s.timers.nextDeadline, s.stopping)
            }
            if jobs.isEmpty && due.isEmpty {
                if stopping { break }
                if let next {
                    let nanoseconds = next > now ? next - now : 0
                    _ = wakeup.wait(timeout: .now() + .nanoseconds(Int(clamping: nanoseconds)))
                } else {
                    wakeup.wait()
                }
                state.withLock { $0.parked = false }
                continue
            }
            // A woken sleeper's task is enqueued here again (it prefers this executor) and runs
            // on the next turn.
            for sleeper in due { sleeper.wake() }
            due.removeAll(keepingCapacity: true)
            for job in jobs { job.runSynchronously(on: asUnownedTaskExecutor()) }
            jobs.removeAll(keepingCapacity: true)
        }
        // Jobs queued between the last turn and `stopping` were taken above; nothing is left.
    }
}
