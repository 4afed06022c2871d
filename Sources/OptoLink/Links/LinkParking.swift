import Foundation

/// Holds the URL handed to `handle(url:)` before initialisation finishes (latest wins)
/// and releases it once, after the deferred emission (docs/CONTRACT.md §2, "handle(url:)").
///
/// Parking and opening share one lock, so a URL either parks before the gate opens (and
/// is returned by ``open()``) or sees the gate open and is processed by its caller.
final class LinkParking: Sendable {
    private struct State: Sendable {
        var isOpen = false
        var parked: URL?
    }

    private let state = LockedBox(State())

    /// Parks `url` when the gate is still closed; returns `false` when the caller must
    /// process it now.
    func park(_ url: URL) -> Bool {
        state.withLock { state in
            guard !state.isOpen else { return false }
            state.parked = url
            return true
        }
    }

    /// Opens the gate and returns the parked URL, if any (only once).
    func open() -> URL? {
        state.withLock { state in
            state.isOpen = true
            defer { state.parked = nil }
            return state.parked
        }
    }
}
