import CEpoll

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writing a connection's pending output, for the server's and the client's loops alike.
package enum SocketWrite {
    package enum Outcome {
        /// Everything was written; the buffer is emptied (and shrunk when it had grown past 64 KiB).
        case done
        /// The socket's send buffer is full: wait until it is writable.
        case wouldBlock
        /// The peer is gone (`EPIPE`, `ECONNRESET`, …): close the connection.
        case failed
    }

    /// Sends `output[offset...]` until it is all out, the socket would block, or it fails.
    ///
    /// - Returns: the outcome, and whether at least one byte was written.
    static func flush(_ fd: Int32, _ output: inout [UInt8], _ offset: inout Int) -> (Outcome, wrote: Bool) {
        var wrote = false
        while offset < output.count {
            let n = output.withUnsafeBytes { bytes in
                cepoll_send(fd, bytes.baseAddress! + offset, UInt(bytes.count - offset))
            }
            if n > 0 {
                offset += n
                wrote = true
            } else {
                let error = cepoll_errno()
                if error == EINTR { continue }
                return (error == EAGAIN || error == EWOULDBLOCK ? .wouldBlock : .failed, wrote)
            }
        }
        written(&output, &offset)
        return (.done, wrote)
    }

    /// Empties a buffer whose bytes are all written (shrinking it when it had grown past 64 KiB).
    static func written(_ output: inout [UInt8], _ offset: inout Int) {
        guard !output.isEmpty else { return }
        if output.capacity > 64 * 1024 { output = [] } else { output.removeAll(keepingCapacity: true) }
        offset = 0
    }
}
