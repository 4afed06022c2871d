import Synchronization

/// The run's stop switch: once stopped, no journey or step starts; in-flight calls finish
/// (or are cancelled when the grace period ends). Set by the duration, the iteration
/// budget, or SIGINT; the first reason wins.
public final class RunControl: Sendable {
    private let reason = Mutex<StopReason?>(nil)

    public init() {}

    /// Stops the run for `why`; later calls keep the first reason.
    public func stop(_ why: StopReason) {
        reason.withLock { if $0 == nil { $0 = why } }
    }

    public var isStopped: Bool { reason.withLock { $0 != nil } }
    public var stopReason: StopReason? { reason.withLock { $0 } }
}
