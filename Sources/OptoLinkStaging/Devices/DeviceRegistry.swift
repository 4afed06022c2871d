import Synchronization

/// Devices the backend has seen (via `/sdk/session`, `/match` or `/data?deviceId=`), with
/// their first/last seen times and identity binding.
///
/// Bounded: a device idle for more than `idleSeconds` is forgotten (swept at most once per
/// `idleSeconds / 4` of clock time, on a sighting), so a long run's registry holds the devices
/// of about one idle window, not every install the run ever made.
package final class DeviceRegistry: Sendable {
    struct Device: Sendable {
        var firstSeenAt: Double
        var lastSeenAt: Double
        var externalId: String?
    }

    private struct State {
        var devices: [String: Device] = [:]
        var lastSweep = -Double.infinity
        var evicted = 0
    }

    let idleSeconds: Double
    private let state = Mutex(State())

    /// - Parameter idleSeconds: seconds after its last sighting a device is forgotten.
    init(idleSeconds: Double = 3_600) { self.idleSeconds = idleSeconds > 0 ? idleSeconds : 3_600 }

    /// Records a sighting of `deviceId` at `now` and returns the device.
    @discardableResult
    func touch(_ deviceId: String, now: Double) -> Device {
        state.withLock { state in
            sweepIfDue(&state, now: now)
            var device = state.devices[deviceId] ?? Device(firstSeenAt: now, lastSeenAt: now)
            device.lastSeenAt = now
            state.devices[deviceId] = device
            return device
        }
    }

    /// Whether `deviceId` was seen within the idle window before `now` (`nil`: ignore idleness).
    package func isKnown(_ deviceId: String, now: Double? = nil) -> Bool {
        state.withLock { state in
            guard let device = state.devices[deviceId] else { return false }
            guard let now else { return true }
            return now - device.lastSeenAt <= idleSeconds
        }
    }

    /// Binds `externalId`; returns whether the device was bound to a different one before (`rebound`).
    func bind(_ deviceId: String, externalId: String, now: Double) -> Bool {
        state.withLock { state in
            sweepIfDue(&state, now: now)
            var device = state.devices[deviceId] ?? Device(firstSeenAt: now, lastSeenAt: now)
            let rebound = device.externalId != nil && device.externalId != externalId
            device.externalId = externalId
            device.lastSeenAt = now
            state.devices[deviceId] = device
            return rebound
        }
    }

    func unbind(_ deviceId: String, now: Double) {
        state.withLock { state in
            state.devices[deviceId]?.externalId = nil
            state.devices[deviceId]?.lastSeenAt = now
        }
    }

    var count: Int { state.withLock { $0.devices.count } }
    /// Devices forgotten so far for being idle.
    package var evicted: Int { state.withLock { $0.evicted } }
    func reset() { state.withLock { $0 = State() } }

    private func sweepIfDue(_ state: inout State, now: Double) {
        guard now - state.lastSweep >= idleSeconds / 4 else { return }
        state.lastSweep = now
        let before = state.devices.count
        state.devices = state.devices.filter { now - $0.value.lastSeenAt <= idleSeconds }
        state.evicted += before - state.devices.count
    }
}
