import Testing

@testable import OptoLinkSoak

/// The progress line: one line rewritten on a TTY, plain lines into a pipe.
@Suite("Progress line")
struct ProgressReporterTests {
    @Test("a TTY rewrites one line, a pipe gets plain lines")
    func progress() {
        let snapshot = ProgressSnapshot(
            elapsed: 12.04, scheduled: 240, done: 238, inFlight: 2, requests: 1520, requestRate: 130.2, status429: 3,
            errors: 0, p99: 0.0041)
        #expect(
            snapshot.line
                == "[  12.0s] journeys 238/240 done · 2 in flight · 1520 req (130/s) · 429s 3 · errors 0 · p99 4.1ms")
        #expect(ProgressReporter(isTTY: true).render(snapshot).hasPrefix("\r\u{1B}[2K[  12.0s]"))
        #expect(ProgressReporter(isTTY: false).render(snapshot).hasSuffix("ms\n"))
        #expect(ProgressReporter(isTTY: false, plainInterval: 10).interval == 10)
    }
}
