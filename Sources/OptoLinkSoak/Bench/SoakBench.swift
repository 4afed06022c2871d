import Foundation

/// `optolink-soak bench`: measures the driver's own overhead (see `Benchmarks/README.md`).
enum SoakBench {
    static func run(_ options: SoakCommand.BenchOptions) async -> Int32 {
        FileHandle.standardError.write(Data("error: bench needs the embedded emulator, not part of this build yet\n".utf8))
        return 2
    }
}
