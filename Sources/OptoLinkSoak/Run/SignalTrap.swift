import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Turns SIGINT (Ctrl-C) or SIGTERM into a call of `handler` on a plain thread instead of killing
/// the process, so an interrupted run stops new work and still writes its report.
///
/// A process-wide `sigaction` handler writes the signal number to a pipe (the self-pipe trick:
/// `write(2)` is async-signal-safe) and one reader thread calls the trapped handlers. The
/// handler is in place when the initializer returns, so a signal sent as soon as the caller
/// announces itself (a banner, a shard's "started" line) is never lost. A libdispatch signal
/// source is not used: on Linux it installs its handler asynchronously on its manager thread
/// after `resume()`, and a signal sent in between meets `SIG_IGN` and is dropped (a `serve`
/// child would ignore its Ctrl-C that way and leave a whole test run waiting on it).
package final class SignalTrap: Sendable {
    private let signalNumber: Int32
    private let id: UInt64

    /// Starts trapping `signalNumber` (default SIGINT) until ``cancel()``. `handler` runs on the
    /// trap's reader thread, once per delivered signal.
    package init(signal signalNumber: Int32 = SIGINT, handler: @escaping @Sendable () -> Void) {
        self.signalNumber = signalNumber
        id = SignalPipe.shared.add(signalNumber, handler)
        // A parent may have started us with the signal blocked (a blocked mask survives exec:
        // test runners, some supervisors); then it would stay pending forever. Unblock it here.
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, signalNumber)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }

    /// Stops trapping; once no trap is left for the signal it is ignored.
    package func cancel() { SignalPipe.shared.remove(signalNumber, id) }
}

/// The process's one signal pipe: the write end for the `sigaction` handler, a reader thread
/// that calls the handlers registered for each signal number.
private final class SignalPipe: Sendable {
    static let shared = SignalPipe()

    private struct Registry {
        var handlers: [Int32: [UInt64: @Sendable () -> Void]] = [:]
        var installed: Set<Int32> = []
        var nextId: UInt64 = 0
    }

    private let registry = Mutex(Registry())
    private let readEnd: Int32

    private init() {
        var fds: [Int32] = [-1, -1]
        // Close-on-exec: child processes (shards, curl) must not inherit the pipe. The write end
        // never blocks the handler: with the pipe full, a signal is dropped but 64 KiB of
        // pending signal numbers are already waiting to be handled.
        if pipe(&fds) == 0 {
            for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            _ = fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK)
        }
        readEnd = fds[0]
        signalPipeWriteEnd.store(fds[1], ordering: .releasing)
        guard fds[0] >= 0 else { return }
        let thread = Thread { [self] in readLoop() }
        thread.name = "optolink-signals"
        thread.start()
    }

    func add(_ signalNumber: Int32, _ handler: @escaping @Sendable () -> Void) -> UInt64 {
        registry.withLock { r in
            r.nextId += 1
            r.handlers[signalNumber, default: [:]][r.nextId] = handler
            if !r.installed.contains(signalNumber) {
                r.installed.insert(signalNumber)
                var action = sigaction()
                #if canImport(Glibc)
                    action.__sigaction_handler.sa_handler = signalPipeHandler
                #else
                    action.__sigaction_u.__sa_handler = signalPipeHandler
                #endif
                sigemptyset(&action.sa_mask)
                action.sa_flags = SA_RESTART
                sigaction(signalNumber, &action, nil)
            }
            return r.nextId
        }
    }

    func remove(_ signalNumber: Int32, _ id: UInt64) {
        registry.withLock { r in
            r.handlers[signalNumber]?[id] = nil
            if r.handlers[signalNumber]?.isEmpty ?? true, r.installed.contains(signalNumber) {
                r.installed.remove(signalNumber)
                signal(signalNumber, SIG_IGN)
            }
        }
    }

    private func readLoop() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 { return }
            for byte in buffer[0..<count] {
                let handlers = registry.withLock { Array(($0.handlers[Int32(byte)] ?? [:]).values) }
                for handler in handlers { handler() }
            }
        }
    }
}

/// The pipe's write end, read by the signal handler (an atomic: no lock in a handler).
private let signalPipeWriteEnd = Atomic<Int32>(-1)

/// The `sigaction` handler: async-signal-safe, it only writes the signal number to the pipe.
private let signalPipeHandler: @convention(c) (Int32) -> Void = { signalNumber in
    let saved = errno
    var byte = UInt8(truncatingIfNeeded: signalNumber)
    _ = write(signalPipeWriteEnd.load(ordering: .acquiring), &byte, 1)
    errno = saved
}
