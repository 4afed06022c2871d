import Foundation
import Testing

import OptoLinkSoak
import SoakRecords

/// Handing glibc's free heap back before each RSS reading (issue 12): the RSS series follows what
/// the process holds, not what the allocator caches.
@Suite struct ProcessMemoryTests {
    @Test("after 36 of 48 MiB of small blocks are freed (every 4th kept), a trim returns pages and RSS does not rise")
    func trimReturnsFreedPages() throws {
        #if canImport(Glibc)
            // Blocks below the mmap threshold, so they live in the heap and freeing them leaves holes.
            var blocks = (0..<24_576).map { [UInt8](repeating: UInt8(truncatingIfNeeded: $0), count: 2_048) }
            let checksum = blocks.reduce(0) { $0 &+ Int($1[7]) }
            // Three freed blocks in a row span at least one whole page the trim can return.
            blocks = blocks.enumerated().compactMap { $0.offset % 4 == 0 ? $0.element : nil }
            let before = try #require(ProcessMemory.residentBytes())
            #expect(ProcessMemory.releaseFreeHeap())
            let after = try #require(ProcessMemory.residentBytes())
            // Other suites allocate concurrently, so only the direction is asserted, with 8 MiB of slack.
            #expect(after <= before + 8 << 20, "\(before) -> \(after)")
            #expect(blocks.count == 6_144 && checksum > 0)
        #else
            #expect(!ProcessMemory.releaseFreeHeap())
        #endif
    }

    @Test("the RSS sampler trims before reading unless told not to, and records each reading")
    func samplerTrimsByDefault() {
        let timeline = RunTimeline()
        let trimming = RSSSampler(timeline: timeline, every: 1)
        let plain = RSSSampler(timeline: timeline, every: 1, trims: false)
        #expect(trimming.trims && !plain.trims)
        trimming.sample()
        plain.sample()
        #expect(trimming.samples.count == 1 && plain.samples.count == 1)
        #expect((trimming.samples.first?.bytes ?? 0) > 0)
    }
}
