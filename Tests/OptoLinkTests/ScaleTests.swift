import Foundation
import OptoLink
import OptoLinkTestSupport
import Testing

/// The soak tester runs thousands of isolated instances in one process: they must be cheap.
@Suite(.timeLimit(.minutes(1)))
struct ScaleTests {
    /// Resident set size in bytes (Linux `/proc/self/statm`), or `nil` elsewhere.
    static func residentBytes() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        return pages * 4096
    }

    @Test func tenThousandInstancesLaunchOverOneSharedTransport() async throws {
        let transport = StubTransport()
        let count = 10_000
        let before = Self.residentBytes()
        let started = ContinuousClock.now
        var instances: [OptoLink] = []
        instances.reserveCapacity(count)
        for index in 0..<count {
            let environment = OptoLinkEnvironment.inMemory(
                transport: transport, deviceInfo: Fixture.deviceInfo, label: "vd-\(index)")
            instances.append(OptoLink(config: Fixture.config(), environment: environment))
        }
        let created = ContinuousClock.now
        let afterCreate = Self.residentBytes()
        await withTaskGroup(of: Void.self) { group in
            var next = 0
            for _ in 0..<64 where next < count {
                let sdk = instances[next]
                next += 1
                group.addTask { await sdk.start() }
            }
            while await group.next() != nil, next < count {
                let sdk = instances[next]
                next += 1
                group.addTask { await sdk.start() }
            }
            await group.waitForAll()
        }
        for sdk in instances { await sdk.waitForBackgroundWork() }
        let finished = ContinuousClock.now
        let after = Self.residentBytes()

        #expect(transport.requests(for: .match).count == count)
        #expect(transport.requests(for: .session).count == count)
        #expect(Set(transport.requests.compactMap(\.context.instanceLabel)).count == count)
        if let before, let afterCreate, let after {
            print(
                "scale: \(count) instances; create \(created - started), RSS +\((afterCreate - before) / count) B "
                    + "per instance; launch \(finished - created), RSS +\((after - afterCreate) / count) B per launch "
                    + "(incl. the stub's two recorded requests)")
        }
    }
}
