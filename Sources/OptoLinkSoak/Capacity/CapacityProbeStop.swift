import Synchronization

/// The probe in flight, for a SIGINT/SIGTERM to stop it, and whether one arrived.
final class CapacityProbeStop: Sendable {
    private let state = Mutex<(control: RunControl?, reason: String?)>((nil, nil))

    /// The signal's name once one arrived.
    var reason: String? { state.withLock { $0.reason } }

    func running(_ control: RunControl?) {
        state.withLock { state in
            state.control = control
            if state.reason != nil { control?.stop(.interrupted) }
        }
    }

    /// Stops the probe in flight (and every later one) for `reason`.
    func stop(_ reason: String, as stopReason: StopReason) {
        state.withLock { state in
            state.reason = state.reason ?? reason
            state.control?.stop(stopReason)
        }
    }
}
