import Foundation

/// Suspends the current task until it is cancelled (no polling, no real sleep).
func suspendUntilCancelled() async {
    let slot = TestLock<CheckedContinuation<Void, Never>?>(nil)
    await withTaskCancellationHandler {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let cancelled = slot.withLock { stored -> Bool in
                if Task.isCancelled { return true }
                stored = continuation
                return false
            }
            if cancelled { continuation.resume() }
        }
    } onCancel: {
        slot.withLock { stored in
            let continuation = stored
            stored = nil
            return continuation
        }?.resume()
    }
}
