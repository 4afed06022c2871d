import Dispatch
import Foundation

/// The real time source (the default ``OptoLinkEnvironment/clock``): the system's monotonic
/// uptime clock, which exists on every platform the SDK supports (iOS 15 and later, Linux).
///
/// ``instant`` counts `DispatchTime` (monotonic, not changed by setting the wall clock); sleeps
/// are `Task.sleep(nanoseconds:)`; the per-attempt deadline is a dispatch timer source, so an
/// attempt that gets its response first costs no sleeping task to wake and cancel.
public struct OptoLinkSystemClock: OptoLinkClock {
    /// The system clock (stateless: every value is the same clock).
    public init() {}

    /// Now, in nanoseconds of monotonic uptime.
    public var instant: OptoLinkInstant {
        OptoLinkInstant(nanoseconds: Int64(clamping: DispatchTime.now().uptimeNanoseconds))
    }

    /// Sleeps until `deadline` with `Task.sleep(nanoseconds:)`.
    ///
    /// - Throws: `CancellationError` when the calling task is cancelled first.
    public func sleep(until deadline: OptoLinkInstant) async throws {
        let remaining = instant.duration(to: deadline).nanoseconds
        guard remaining > 0 else { return try Task.checkCancellation() }
        try await Task.sleep(nanoseconds: UInt64(remaining))
    }

    /// A dispatch timer source on the global queue that runs `expire` at `deadline`.
    ///
    /// A timer source rather than `asyncAfter`: cancelling it removes it (and what `expire`
    /// holds, e.g. an attempt's task and its response) at once, where a cancelled `asyncAfter`
    /// item stays queued until its deadline.
    public func startTimer(until deadline: OptoLinkInstant, expire: @escaping @Sendable () -> Void) -> OptoLinkTimer {
        let timer = DispatchSource.makeTimerSource(queue: .global())
        timer.setEventHandler(handler: expire)
        let remaining = max(0, instant.duration(to: deadline).nanoseconds)
        // `Int` nanoseconds: the retry loop caps deadlines at one year, far below `Int.max`.
        timer.schedule(deadline: .now() + .nanoseconds(Int(clamping: remaining)), leeway: .milliseconds(1))
        timer.activate()
        let source = TimerSource(timer)
        return OptoLinkTimer { source.cancel() }
    }

    /// A dispatch timer source that any thread may cancel.
    ///
    /// `@unchecked Sendable` is sound: the only stored property is an immutable reference, and the
    /// one operation it offers, `DispatchSource.cancel()`, is thread-safe and idempotent (libdispatch
    /// documents cancellation as asynchronous and callable from any thread).
    private final class TimerSource: @unchecked Sendable {
        private let timer: any DispatchSourceTimer

        init(_ timer: any DispatchSourceTimer) { self.timer = timer }

        func cancel() { timer.cancel() }
    }
}
