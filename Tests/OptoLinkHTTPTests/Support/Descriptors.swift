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
