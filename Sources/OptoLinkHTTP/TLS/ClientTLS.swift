import Synchronization

/// What every loop of one ``HTTPClient`` shares for TLS: the configuration, the OpenSSL context
/// (made on the first `https` request, so a client that never speaks TLS never loads OpenSSL),
/// and the handshake counters.
final class ClientTLS: Sendable {
    let configuration: TLSConfiguration
    private let context = Mutex<Result<TLSContext, TLSFailure>?>(nil)
    let fullHandshakes = Atomic<Int>(0)
    let resumedHandshakes = Atomic<Int>(0)

    init(configuration: TLSConfiguration) { self.configuration = configuration }

    /// The client context, made once; the same failure every time when it cannot be made.
    func clientContext() -> Result<TLSContext, TLSFailure> {
        context.withLock { held in
            if let held { return held }
            let made = Result { () throws(TLSFailure) in try TLSContext(client: configuration) }
            held = made
            return made
        }
    }
}

/// How many TLS handshakes an ``HTTPClient`` has completed, full and resumed.
package struct TLSHandshakeCounts: Sendable, Equatable {
    /// Handshakes with a certificate exchange.
    package var full: Int
    /// Handshakes that resumed an earlier session of the same host and port.
    package var resumed: Int

    package init(full: Int, resumed: Int) {
        self.full = full
        self.resumed = resumed
    }
}
