import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Prints the live progress line to standard error: on a TTY one line rewritten in place
/// (every `ttyInterval` seconds); otherwise a plain line every `plainInterval` seconds, so
/// CI logs stay readable.
package struct ProgressReporter: Sendable {
    package var isTTY: Bool
    package var ttyInterval: Double
    package var plainInterval: Double
    /// Where lines go (standard error by default; tests capture them).
    package var write: @Sendable (String) -> Void

    package init(
        isTTY: Bool = isatty(STDERR_FILENO) == 1, ttyInterval: Double = 0.5, plainInterval: Double = 10,
        write: @escaping @Sendable (String) -> Void = { FileHandle.standardError.write(Data($0.utf8)) }
    ) {
        self.isTTY = isTTY
        self.ttyInterval = ttyInterval
        self.plainInterval = plainInterval
        self.write = write
    }

    /// Seconds between two lines.
    package var interval: Double { isTTY ? ttyInterval : plainInterval }

    /// Renders one snapshot: `\r` + erase-line on a TTY, a full line otherwise.
    package func render(_ snapshot: ProgressSnapshot) -> String {
        isTTY ? "\r\u{1B}[2K" + snapshot.line : snapshot.line + "\n"
    }

    /// Prints `snapshot` every ``interval`` until the task is cancelled, then a final line.
    package func run(clock: any Clock<Duration>, snapshot: @Sendable () -> ProgressSnapshot) async {
        while !Task.isCancelled {
            do {
                try await clock.sleep(for: .nanoseconds(Int64(interval * 1e9)), tolerance: nil)
            } catch {
                break
            }
            write(render(snapshot()))
        }
        if isTTY { write(render(snapshot()) + "\n") }
    }
}
