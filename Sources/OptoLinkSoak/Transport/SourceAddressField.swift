/// The request field that carries a virtual device's source address (`--local-ips`) from its
/// attempt middleware (``DeviceAttemptMiddleware``), past the recorder (which records it as the
/// attempt's client IP), to ``NativeTransport``, which binds the connection to it and never
/// sends the field.
enum SourceAddressField {
    static let name = "X-OptoLink-Source-Address"
}
