import Dispatch
import Foundation

/// Turns SIGINT (Ctrl-C) or SIGTERM into a call of `handler` on a dispatch queue instead of killing
/// the process, so an interrupted run stops new work and still writes its report.
package final class SignalTrap {
    private let source: any DispatchSourceSignal

    /// Starts trapping `signalNumber` (default SIGINT) until ``cancel()``.
    package init(signal signalNumber: Int32 = SIGINT, handler: @escaping @Sendable () -> Void) {
        signal(signalNumber, SIG_IGN)
        // A parent may have started us with the signal blocked (a blocked mask survives exec:
        // test runners, some supervisors); then it would stay pending forever. Unblock it here.
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, signalNumber)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
        let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
        source.setEventHandler(handler: handler)
        source.resume()
        self.source = source
    }

    /// Stops trapping (the signal stays ignored).
    package func cancel() { source.cancel() }
}
