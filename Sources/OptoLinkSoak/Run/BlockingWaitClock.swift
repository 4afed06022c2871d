import Foundation

/// The time a blocking wait reads (seconds) and sleeps on: the system's, or a test's stepped one.
package struct BlockingWaitClock: Sendable {
    package var now: @Sendable () -> Double
    package var sleep: @Sendable (Double) -> Void

    package init(now: @escaping @Sendable () -> Double, sleep: @escaping @Sendable (Double) -> Void) {
        self.now = now
        self.sleep = sleep
    }

    /// Monotonic seconds, and a real sleep of the thread.
    package static let system = BlockingWaitClock(
        now: { ProcessInfo.processInfo.systemUptime }, sleep: { Thread.sleep(forTimeInterval: $0) })
}
