/// Polls `condition` every 5 ms until it holds or `timeout` passes; returns whether it held.
///
/// For server state that settles on another thread (a counter after a close). Bounded, never a bare sleep.
/// The default bound is generous (30 s) because a condition that holds returns at once: the bound
/// only matters when a whole `swift test` on a loaded 2-core machine starves this task for seconds.
func eventually(timeout: Duration = .seconds(30), _ condition: () -> Bool) async -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return condition()
}
