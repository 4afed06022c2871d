/// The response field that carries how long an attempt's TLS handshake took (nanoseconds, a
/// decimal integer) from ``NativeTransport``, which adds it to a response whose connection was
/// opened for that attempt, back to the recorder, which writes it as the attempt's `tls` column.
/// The server never sends it; a field of that name from the server is replaced.
enum TLSHandshakeField {
    static let name = "X-OptoLink-TLS-Handshake-Ns"

    /// The handshake's seconds in `headers`, or `nil` when the field is absent or malformed.
    static func seconds(in headers: [String: String]) -> Double? {
        headers[name].flatMap { UInt64($0) }.map { Double($0) / 1e9 }
    }
}
