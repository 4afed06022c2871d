#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A `Date: <IMF-fixdate>\r\n` header line, reformatted at most once per wall-clock second.
///
/// One per event loop (not shared, so no locking); each response copies the cached bytes.
package struct HTTPDateHeader {
    private(set) var bytes: [UInt8] = []
    private var second: time_t = -1

    /// The header line for the current second (RFC 9110 §5.6.7, e.g. `Date: Sun, 06 Nov 1994 08:49:37 GMT`).
    package mutating func current() -> [UInt8] {
        let now = time(nil)
        if now != second {
            second = now
            bytes = Self.format(now)
        }
        return bytes
    }

    package static func format(_ seconds: time_t) -> [UInt8] {
        var t = seconds
        var tm = tm()
        gmtime_r(&t, &tm)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        let text =
            "Date: \(days[Int(tm.tm_wday) % 7]), \(two(tm.tm_mday)) \(months[Int(tm.tm_mon) % 12]) "
            + "\(tm.tm_year + 1900) \(two(tm.tm_hour)):\(two(tm.tm_min)):\(two(tm.tm_sec)) GMT\r\n"
        return Array(text.utf8)
    }
}
