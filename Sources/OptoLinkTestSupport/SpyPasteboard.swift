import Foundation
import OptoLink

/// An `OptoLinkPasteboard` that records every read and clear, for asserting the clipboard leg of
/// the deferred match (docs/CONTRACT.md §2, "Deferred match"): read once in the first-launch window,
/// cleared only after a hit, never touched when `clipboardEnabled` is false. Thread-safe.
///
/// Pass it to `OptoLinkEnvironment.inMemory(transport:pasteboard:…)`.
public final class SpyPasteboard: OptoLinkPasteboard {
    /// One thing the SDK did to the pasteboard, in order.
    public enum Access: Sendable, Equatable {
        /// `string()` was called and returned this content.
        case read(String?)
        /// `clear()` was called.
        case clear
    }

    private struct State: Sendable {
        var content: String?
        var accesses: [Access] = []
    }

    private let state: TestLock<State>

    /// A pasteboard holding `content` (a click token `opl_…`, or a link URL carrying
    /// `?opl_click=`), or empty.
    public init(_ content: String? = nil) {
        state = TestLock(State(content: content))
    }

    /// Every read and clear so far, in order.
    public var accesses: [Access] { state.withLock { $0.accesses } }

    /// How many times the content was read.
    public var readCount: Int {
        accesses.count { if case .read = $0 { true } else { false } }
    }

    /// How many times the content was cleared.
    public var clearCount: Int { accesses.count { $0 == .clear } }

    /// The current content (reading it here is not recorded).
    public var content: String? { state.withLock { $0.content } }

    /// Replaces the content, as a browser's "copy" would (not recorded).
    public func setString(_ value: String?) {
        state.withLock { $0.content = value }
    }

    /// The content; recorded as ``Access/read(_:)``.
    public func string() -> String? {
        state.withLock { state in
            state.accesses.append(.read(state.content))
            return state.content
        }
    }

    /// Empties the pasteboard; recorded as ``Access/clear``.
    public func clear() {
        state.withLock { state in
            state.content = nil
            state.accesses.append(.clear)
        }
    }
}
