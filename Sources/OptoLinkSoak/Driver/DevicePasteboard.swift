import OptoLink
import Synchronization

/// A virtual device's clipboard: the click step writes the click page's payload, the SDK
/// reads it once in the first-launch window and clears it on a hit.
package final class DevicePasteboard: OptoLinkPasteboard {
    private let content = Mutex<String?>(nil)

    package init() {}

    package func string() -> String? { content.withLock { $0 } }
    package func clear() { content.withLock { $0 = nil } }
    /// Puts `value` on the clipboard (what copying in Safari does).
    package func set(_ value: String?) { content.withLock { $0 = value } }
}
