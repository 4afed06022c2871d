import Foundation

/// Reads the process's resident set size (Linux `/proc/self/status` `VmRSS`, else `/proc/self/statm`).
package enum ProcessMemory {
    /// Resident bytes, or `nil` where `/proc` is unavailable.
    package static func residentBytes() -> Int? {
        if let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kib = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        {
            return kib * 1024
        }
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
