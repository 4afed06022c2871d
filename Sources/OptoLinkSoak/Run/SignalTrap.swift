import Dispatch
import Foundation

/// Turns SIGINT (Ctrl-C) into a call of `handler` on a dispatch queue instead of killing
/// the process, so an interrupted run stops new work and still writes its report.
public final class SignalTrap {
    private let source: any DispatchSourceSignal

    /// Starts trapping `signalNumber` (default SIGINT) until ``cancel()``.
    public init(signal signalNumber: Int32 = SIGINT, handler: @escaping @Sendable () -> Void) {
        signal(signalNumber, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
        source.setEventHandler(handler: handler)
        source.resume()
        self.source = source
    }

    /// Stops trapping (the signal stays ignored).
    public func cancel() { source.cancel() }
}
