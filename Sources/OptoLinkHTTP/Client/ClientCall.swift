import Synchronization

/// One request in flight: the caller's continuation, resumed exactly once by whichever comes
/// first, the loop's result or the caller's cancellation.
///
/// The continuation is an `UnsafeContinuation` (a `CheckedContinuation` allocates a checker per
/// request): resuming it once is guaranteed by `State`, which hands it out under the lock to the
/// one ``finish(_:)`` that sets `finished`, or back to ``attach(_:)`` when the outcome came first.
final class ClientCall: Sendable {
    typealias Outcome = Result<HTTPClientResponse, HTTPClientError>

    private struct State {
        var continuation: UnsafeContinuation<Outcome, Never>?
        var pending: Outcome?
        var finished = false
    }

    let id: UInt64
    private let state = Mutex(State())

    init(id: UInt64) { self.id = id }

    /// Stores the continuation, or resumes it at once when the outcome is already known.
    func attach(_ continuation: UnsafeContinuation<Outcome, Never>) {
        let ready: Outcome? = state.withLock { s in
            if let pending = s.pending {
                s.pending = nil
                return pending
            }
            s.continuation = continuation
            return nil
        }
        if let ready { continuation.resume(returning: ready) }
    }

    /// Delivers the outcome if none was delivered yet; returns `false` when one already was.
    @discardableResult
    func finish(_ outcome: Outcome) -> Bool {
        let (first, continuation): (Bool, UnsafeContinuation<Outcome, Never>?) = state.withLock { s in
            guard !s.finished else { return (false, nil) }
            s.finished = true
            guard let c = s.continuation else {
                s.pending = outcome
                return (true, nil)
            }
            s.continuation = nil
            return (true, c)
        }
        continuation?.resume(returning: outcome)
        return first
    }

    /// `true` once an outcome was delivered (the loop then drops the request if it still holds it).
    var isFinished: Bool { state.withLock { $0.finished } }
}

/// What callers hand a loop thread: new requests and cancellations, in order.
enum ClientCommand: Sendable {
    case submit(ClientCall, HTTPClientRequest, deadline: UInt64, addresses: [ClientAddress])
    case cancel(UInt64)
    /// A job of a task that prefers this loop as its executor.
    case run(UnownedJob)
}

/// A resolved socket address (``AddressResolver``); equal when the bytes are.
package struct ClientAddress: Sendable, Equatable {
    /// The `sockaddr_in` / `sockaddr_in6` bytes.
    package var bytes: [UInt8]
    package var family: Int32
    /// Whether connects to it are failing, shared by every copy.
    package var health = AddressHealth()

    /// The address held in `bytes`, a `sockaddr` of `family` (`AF_INET` or `AF_INET6`).
    package init(bytes: [UInt8], family: Int32) {
        self.bytes = bytes
        self.family = family
    }

    package static func == (lhs: ClientAddress, rhs: ClientAddress) -> Bool {
        lhs.family == rhs.family && lhs.bytes == rhs.bytes
    }
}
