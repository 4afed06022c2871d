/// Names one public SDK call across the run: (virtual device, launch, call id).
struct CallKey: Hashable, Comparable, Sendable {
    var device: String
    var launch: Int
    var callId: UInt64

    init(_ attempt: AttemptRecord) {
        device = attempt.device
        launch = attempt.launch
        callId = attempt.callId
    }

    init(_ call: CallRecord) {
        device = call.device
        launch = call.launch
        callId = call.callId
    }

    static func < (lhs: CallKey, rhs: CallKey) -> Bool {
        (lhs.device, lhs.launch, lhs.callId) < (rhs.device, rhs.launch, rhs.callId)
    }

    /// One call's attempts, sorted by attempt number.
    typealias Group = (key: CallKey, attempts: [AttemptRecord])

    /// Groups attempts by call, each group sorted by attempt number; groups in key order.
    static func group(_ attempts: [AttemptRecord]) -> [Group] {
        var groups: [CallKey: [AttemptRecord]] = [:]
        for attempt in attempts { groups[CallKey(attempt), default: []].append(attempt) }
        return groups.keys.sorted().map { key in
            (key, groups[key, default: []].sorted { ($0.attempt, $0.actualStart) < ($1.attempt, $1.actualStart) })
        }
    }
}
