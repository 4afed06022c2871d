import Foundation

/// An ``OptoLinkPasteboard`` held in memory: the Linux default and the test double for
/// the clipboard leg of the deferred match (docs/CONTRACT.md §2, "Deferred match"). Thread-safe.
public final class InMemoryPasteboard: OptoLinkPasteboard {
    private let content: LockedBox<String?>

    /// Creates a pasteboard holding `initial` (e.g. a click token `opl_…` or a link URL
    /// with `?opl_click=`), or empty.
    public init(_ initial: String? = nil) {
        content = LockedBox(initial)
    }

    /// The current content, or `nil` when empty (the deferred match reads it once per first launch).
    public func string() -> String? {
        content.withLock { $0 }
    }

    /// Empties the pasteboard (the SDK calls it only after a deferred-match hit).
    public func clear() {
        content.withLock { $0 = nil }
    }

    /// Replaces the content (what a browser's "copy" would do).
    public func setString(_ value: String?) {
        content.withLock { $0 = value }
    }
}
