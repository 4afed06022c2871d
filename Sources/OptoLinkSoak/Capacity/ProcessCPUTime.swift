import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// CPU seconds (user + system) used so far by this process and by its waited-for children
/// (`getrusage`), read around a probe to tell how busy the generator was.
package struct ProcessCPUTime: Sendable, Equatable {
    package var own: Double
    package var children: Double

    /// The CPU time used up to now.
    package static func now() -> ProcessCPUTime {
        ProcessCPUTime(own: seconds(RUSAGE_SELF), children: seconds(RUSAGE_CHILDREN))
    }

    #if canImport(Glibc)
        private typealias Who = __rusage_who
    #else
        private typealias Who = Int32
    #endif

    private static func seconds(_ who: Who) -> Double {
        var usage = rusage()
        #if canImport(Glibc)
            guard getrusage(__rusage_who_t(who.rawValue), &usage) == 0 else { return 0 }
        #else
            guard getrusage(who, &usage) == 0 else { return 0 }
        #endif
        func value(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return value(usage.ru_utime) + value(usage.ru_stime)
    }
}
