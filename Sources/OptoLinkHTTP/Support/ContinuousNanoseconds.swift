import CEpoll

/// The kernel clock behind `ContinuousClock`, read through the event loop's system-call shim:
/// nanoseconds since an origin fixed for the machine's uptime, without `Duration`'s 128-bit
/// arithmetic (the soak's run timeline reads it several times per request).
package enum ContinuousNanoseconds {
    /// Now, in nanoseconds (only differences between two readings mean anything).
    package static func now() -> Int64 { Int64(truncatingIfNeeded: cepoll_continuous_ns()) }
}
