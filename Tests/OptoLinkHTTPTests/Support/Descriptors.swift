#if canImport(Glibc)
    import Glibc
#endif

/// How many file descriptors this process has open (entries of /proc/self/fd, minus the listing's own).
func openDescriptorCount() -> Int {
    guard let directory = opendir("/proc/self/fd") else { return -1 }
    defer { closedir(directory) }
    var count = 0
    while readdir(directory) != nil { count += 1 }
    return count - 3  // ".", ".." and the descriptor opendir itself holds
}

/// Tests that change or count process-wide state (descriptor limits, descriptor counts) run only
/// with `OPTOLINK_HTTP_PROCESS_WIDE_TESTS=1`: under a plain `swift test` other targets' tests run
/// in the same process at the same time.
let processWideTestsEnabled = getenv("OPTOLINK_HTTP_PROCESS_WIDE_TESTS") != nil
