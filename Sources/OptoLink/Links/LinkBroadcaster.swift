import Foundation

/// The `links` stream's engine (docs/CONTRACT.md §2, "links"): every access gets a fresh
/// `AsyncStream` that first yields the last link (replay-last) and then live ones.
///
/// Registration and the snapshot of the last link happen in one critical section, and
/// emission stores and yields under the same lock, so no link slips between replay and
/// live delivery and every subscriber sees emissions in the same order. Streams never
/// finish, except when the owning instance is disposed (then they finish, so `for await`
/// loops end instead of hanging forever).
final class LinkBroadcaster: Sendable {
    private struct State: Sendable {
        var last: OptoLinkData?
        var subscribers: [UInt64: AsyncStream<OptoLinkData>.Continuation] = [:]
        var nextId: UInt64 = 0
        var finished = false
    }

    private let state = LockedBox(State())

    /// A new subscriber stream.
    func subscribe() -> AsyncStream<OptoLinkData> {
        let (stream, continuation) = AsyncStream.makeStream(of: OptoLinkData.self)
        let id = state.withLock { state in
            state.nextId += 1
            return state.nextId
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.subscribers.removeValue(forKey: id) }
        }
        let finished = state.withLock { state in
            guard !state.finished else { return true }
            state.subscribers[id] = continuation
            if let last = state.last { continuation.yield(last) }
            return false
        }
        if finished { continuation.finish() }
        return stream
    }

    /// Stores `link` as the last one and delivers it to every current subscriber.
    func emit(_ link: OptoLinkData) {
        state.withLock { state in
            guard !state.finished else { return }
            state.last = link
            for continuation in state.subscribers.values { continuation.yield(link) }
        }
    }

    /// The last emitted link, if any.
    var last: OptoLinkData? {
        state.withLock { $0.last }
    }

    /// Finishes every stream (dispose); later subscribers get an already-finished stream.
    func finishAll() {
        let continuations = state.withLock { state in
            state.finished = true
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        for continuation in continuations { continuation.finish() }
    }
}
