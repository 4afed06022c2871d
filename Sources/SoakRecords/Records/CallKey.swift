/// Names one public SDK call across the run: the device launch that made it and the call id
/// the SDK gave it (unique within that instance).
package struct CallKey: Hashable, Comparable, Sendable {
    package var deviceLaunch: DeviceLaunch
    package var callId: UInt64

    package init(_ deviceLaunch: DeviceLaunch, callId: UInt64) {
        self.deviceLaunch = deviceLaunch
        self.callId = callId
    }

    /// The call an attempt belongs to.
    package init(_ attempt: AttemptRecord) {
        self.init(DeviceLaunch(device: attempt.device, launch: attempt.launch), callId: attempt.callId)
    }

    /// The call a call record describes.
    package init(_ call: CallRecord) {
        self.init(DeviceLaunch(device: call.device, launch: call.launch), callId: call.callId)
    }

    package var device: String { deviceLaunch.device }
    package var launch: Int { deviceLaunch.launch }

    /// By device, launch, then call id.
    package static func < (lhs: CallKey, rhs: CallKey) -> Bool {
        (lhs.deviceLaunch, lhs.callId) < (rhs.deviceLaunch, rhs.callId)
    }
}
