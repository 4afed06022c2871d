#if os(Linux)
    import CEpoll

    /// The Linux fast path: one epoll set per loop; a wait returns only ready sockets.
    final class EpollPoller: ReadinessPoller {
        static let usesPortableCalls = false
        private static let capacity: Int32 = 256

        private let epollFD: Int32
        private let masks: UnsafeMutablePointer<UInt32>
        private let tokens: UnsafeMutablePointer<UInt64>

        /// Takes ownership of an epoll set made by ``create()``.
        init(epollFD: Int32) {
            self.epollFD = epollFD
            masks = .allocate(capacity: Int(Self.capacity))
            tokens = .allocate(capacity: Int(Self.capacity))
        }

        deinit {
            masks.deallocate()
            tokens.deallocate()
        }

        /// A new close-on-exec epoll set.
        ///
        /// - Throws: ``HTTPServerError/systemCall(_:errno:)`` (`epoll_create1`).
        static func create() throws(HTTPServerError) -> Int32 {
            let fd = cepoll_create()
            guard fd >= 0 else { throw .systemCall("epoll_create1", errno: cepoll_errno()) }
            return fd
        }

        var descriptor: Int32? { epollFD }

        @inline(__always)
        private static func mask(_ interest: IOEvents) -> UInt32 {
            (interest.contains(.readable) ? CEPOLL_IN : 0) | (interest.contains(.writable) ? CEPOLL_OUT : 0)
        }

        func register(_ fd: Int32, interest: IOEvents, token: UInt64) -> Bool {
            cepoll_ctl(epollFD, CEPOLL_CTL_ADD, fd, Self.mask(interest), token) == 0
        }

        func update(_ fd: Int32, interest: IOEvents, token: UInt64) {
            _ = cepoll_ctl(epollFD, CEPOLL_CTL_MOD, fd, Self.mask(interest), token)
        }

        func deregister(_ fd: Int32) {
            _ = cepoll_ctl(epollFD, CEPOLL_CTL_DEL, fd, 0, 0)
        }

        func willClose(_ fd: Int32) {}  // closing the only reference removes it from the set

        func wait(timeoutMilliseconds: Int32) -> Int {
            Int(cepoll_wait(epollFD, masks, tokens, Self.capacity, timeoutMilliseconds))
        }

        @inline(__always)
        func ready(at index: Int) -> (events: IOEvents, token: UInt64) {
            let mask = masks[index]
            var events: IOEvents = []
            if mask & (CEPOLL_ERR | CEPOLL_HUP) != 0 { events.insert(.failed) }
            if mask & CEPOLL_IN != 0 { events.insert(.readable) }
            if mask & CEPOLL_OUT != 0 { events.insert(.writable) }
            return (events, tokens[index])
        }
    }
#endif
