#if canImport(UIKit)
    import UIKit

    /// The iOS ``OptoLinkPasteboard``: `UIPasteboard.general`, read once in the first-launch
    /// window and cleared only after a deferred-match hit.
    struct GeneralPasteboard: OptoLinkPasteboard {
        func string() -> String? { UIPasteboard.general.string }

        func clear() { UIPasteboard.general.items = [] }
    }
#endif
