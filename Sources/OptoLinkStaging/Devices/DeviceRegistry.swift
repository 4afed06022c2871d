import Synchronization

/// Devices the backend has seen (via `/sdk/session`, `/match` or `/data?deviceId=`), with
/// their first/last seen times and identity binding.
final class DeviceRegistry: Sendable {
    struct Device: Sendable {
        var firstSeenAt: Double
        var lastSeenAt: Double
        var externalId: String?
    }

    private let devices = Mutex([String: Device]())

    /// Records a sighting of `deviceId` at `now` and returns the device.
    @discardableResult
    func touch(_ deviceId: String, now: Double) -> Device {
        devices.withLock { devices in
            var device = devices[deviceId] ?? Device(firstSeenAt: now, lastSeenAt: now)
            device.lastSeenAt = now
            devices[deviceId] = device
            return device
        }
    }

    func isKnown(_ deviceId: String) -> Bool { devices.withLock { $0[deviceId] != nil } }

    /// Binds `externalId`; returns whether the device was bound to a different one before (`rebound`).
    func bind(_ deviceId: String, externalId: String, now: Double) -> Bool {
        devices.withLock { devices in
            var device = devices[deviceId] ?? Device(firstSeenAt: now, lastSeenAt: now)
            let rebound = device.externalId != nil && device.externalId != externalId
            device.externalId = externalId
            device.lastSeenAt = now
            devices[deviceId] = device
            return rebound
        }
    }

    func unbind(_ deviceId: String, now: Double) {
        devices.withLock { devices in
            devices[deviceId]?.externalId = nil
            devices[deviceId]?.lastSeenAt = now
        }
    }

    var count: Int { devices.withLock { $0.count } }
    func reset() { devices.withLock { $0.removeAll() } }
}
