import CEpoll
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What callers share with one client loop thread: its inbox, wake-up channel and stop flag.
final class ClientLoopShared: Sendable {
    let waker: Waker
    let stopping = Atomic<Bool>(false)
    /// Set when the client was dropped without `shutdown()`: the loop closes its wake-up channel on exit.
    let closeWakerOnExit = Atomic<Bool>(false)
    private let inbox = Mutex<Inbox>(Inbox())

    private struct Inbox {
        var commands: [ClientCommand] = []
        /// Set by the loop as it exits: nothing posted later is taken.
        var closed = false
    }
    /// Commands posted and not yet taken by the loop.
    private let queued = Atomic<Int>(0)
    /// Set by the loop while it may block in its poller; a poster that clears it wakes the loop.
    private let parked = Atomic<Bool>(false)
    /// Whether the wake-up channel's descriptors are still open. Signalling and closing both hold
    /// this lock, so a signal can never land on a closed descriptor whose number was reused.
    private let wakerOpen = Mutex(true)

    init(waker: Waker) { self.waker = waker }

    /// Queues a command; wakes the loop only when it is parked in its poller (a busy loop takes
    /// the inbox on its next turn without a wake-up system call).
    ///
    /// Why no command is left behind: the poster counts its command, then clears `parked`; the
    /// loop sets `parked`, then reads the count (``park()``), all sequentially consistent. So either
    /// the loop sees the command and does not block, or the poster sees `parked` and wakes it.
    @discardableResult
    func post(_ command: consuming ClientCommand) -> Bool {
        var pending: ClientCommand? = consume command  // moved into the inbox, not copied
        let accepted = inbox.withLock { box in
            guard !box.closed, let command = pending.take() else { return false }
            box.commands.append(command)
            return true
        }
        guard accepted else { return false }
        queued.add(1, ordering: .sequentiallyConsistent)
        if parked.exchange(false, ordering: .sequentiallyConsistent) { wake() }
        return true
    }

    /// The loop is about to wait in its poller: returns `false` when commands are already queued
    /// (then it must not block).
    func park() -> Bool {
        parked.store(true, ordering: .sequentiallyConsistent)
        return queued.load(ordering: .sequentiallyConsistent) == 0
    }

    /// The loop is back from its poller.
    func unpark() { parked.store(false, ordering: .relaxed) }

    /// Whether commands wait in the inbox.
    var hasQueued: Bool { queued.load(ordering: .acquiring) > 0 }

    /// Wakes the loop, unless its wake-up channel is already closed.
    func wake() {
        wakerOpen.withLock { open in if open { waker.signal() } }
    }

    /// Closes the wake-up channel once.
    func closeWaker() {
        wakerOpen.withLock { open in
            guard open else { return }
            open = false
            for fd in waker.descriptors { close(fd) }
        }
    }

    /// Moves every queued command, in posting order, into `batch` (which must be empty): the two
    /// arrays trade buffers, so neither the commands nor a buffer are copied or allocated.
    func takeAll(into batch: inout [ClientCommand], closing: Bool = false) {
        inbox.withLock { box in
            if closing { box.closed = true }
            guard !box.commands.isEmpty else { return }
            queued.subtract(box.commands.count, ordering: .sequentiallyConsistent)
            swap(&box.commands, &batch)
        }
    }
}

/// A client loop is also a task executor: a task that prefers it runs its jobs on the loop's
/// thread, between readiness turns, so a request it sends and the response that resumes it never
/// cross threads (no inbox wake-up, no hand-off to the global pool).
extension ClientLoopShared: TaskExecutor {
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        // The loop has exited: the job runs on the global pool instead of never.
        if !post(.run(job)) { globalConcurrentExecutor.enqueue(job) }
    }

    func runJob(_ job: UnownedJob) {
        job.runSynchronously(on: asUnownedTaskExecutor())
    }
}
