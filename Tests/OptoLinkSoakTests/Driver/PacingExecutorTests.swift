import Foundation
import Synchronization
import Testing

import OptoLinkHTTP
import OptoLinkSoak

/// The pacing executor the open model's arrival schedule runs and sleeps on: its tasks run on its
/// one thread, sleeps last at least their length and end in deadline order, cancellation and
/// shutdown end them, and after shutdown nothing is lost (jobs run on the global pool, sleeps
/// say so). Only lower bounds of time are asserted (a loaded machine may wake anything late).
@Suite(.serialized, .timeLimit(.minutes(1)))
struct PacingExecutorTests {
    /// The calling thread's name (Linux: `/proc/thread-self/comm`), `nil` elsewhere.
    static func threadName() -> String? {
        #if os(Linux)
            guard let text = try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8) else { return nil }
            return text.trimmingCharacters(in: .newlines)
        #else
            return nil
        #endif
    }

    @Test func aTaskThatPrefersItRunsOnItsThreadBeforeAndAfterEverySleep() async throws {
        let pacer = try PacingExecutor(name: "opl-test-pace")
        let names = await withTaskExecutorPreference(pacer) { () async -> [String?] in
            var seen = [Self.threadName()]
            for _ in 0..<20 {
                #expect(await pacer.sleep(nanoseconds: 200_000))
                seen.append(Self.threadName())
            }
            return seen
        }
        await pacer.shutdown()
        #if os(Linux)
            #expect(names.count == 21)
            #expect(names.allSatisfy { $0 == "opl-test-pace" }, "\(names)")
        #endif
    }

    @Test func aSleepLastsAtLeastItsLength() async throws {
        let pacer = try PacingExecutor(name: "opl-test-pace")
        for nanoseconds: Int64 in [1, 50_000, 2_000_000, 20_000_000] {
            let start = Self.clock.now
            let slept = await withTaskExecutorPreference(pacer) { await pacer.sleep(nanoseconds: nanoseconds) }
            #expect(slept)
            #expect(start.duration(to: Self.clock.now) >= .nanoseconds(nanoseconds))
        }
        await pacer.shutdown()
    }

    final class Order: Sendable {
        let ended = Mutex<[Int]>([])
    }

    /// Sleepers of tasks started in a shuffled order end in deadline order.
    @Test func sleepersEndInDeadlineOrder() async throws {
        let pacer = try PacingExecutor(name: "opl-test-pace")
        let order = Order()
        let delays = [7, 2, 9, 1, 5, 3, 8, 4, 6, 10].map { $0 * 15 }  // milliseconds, 15 ms apart
        // Every deadline counts from one instant 300 ms ahead, so tasks that start late still
        // sleep until their own deadline (a loaded machine may start them tens of ms apart).
        let base = ContinuousNanoseconds.now() + 300_000_000
        await withTaskGroup(of: Void.self) { group in
            for delay in delays {
                group.addTask(executorPreference: pacer) {
                    let deadline = base + Int64(delay) * 1_000_000
                    #expect(await pacer.sleep(nanoseconds: deadline - ContinuousNanoseconds.now()))
                    order.ended.withLock { $0.append(delay) }
                }
            }
        }
        await pacer.shutdown()
        #expect(order.ended.withLock { $0 } == delays.sorted())
    }

    static let hour: Int64 = 3_600_000_000_000
    static let clock = ContinuousClock()

    /// A new executor with a task sleeping on it for an hour, and the instant before it started.
    static func hourLongSleeper() async throws -> (PacingExecutor, Task<Bool, Never>, ContinuousClock.Instant) {
        let pacer = try PacingExecutor(name: "opl-test-pace")
        let start = clock.now
        let sleeper = Task(executorPreference: pacer) { await pacer.sleep(nanoseconds: hour) }
        try await Task.sleep(for: .milliseconds(20))
        return (pacer, sleeper, start)
    }

    @Test func cancellingASleeperEndsItsSleepEarly() async throws {
        let (pacer, sleeper, start) = try await Self.hourLongSleeper()
        sleeper.cancel()
        #expect(await sleeper.value)
        #expect(start.duration(to: Self.clock.now) < .seconds(30))
        // A task cancelled before it sleeps does not sleep either.
        let cancelledFirst = Task(executorPreference: pacer) { () async -> Bool in
            withUnsafeCurrentTask { $0?.cancel() }
            return await pacer.sleep(nanoseconds: Self.hour)
        }
        _ = await cancelledFirst.value
        #expect(start.duration(to: Self.clock.now) < .seconds(30))
        await pacer.shutdown()
    }

    @Test func shutdownWakesSleepersAndLaterWorkStillRuns() async throws {
        let (pacer, sleeper, start) = try await Self.hourLongSleeper()
        await pacer.shutdown()
        _ = await sleeper.value
        #expect(start.duration(to: Self.clock.now) < .seconds(30))
        // After shutdown a task that prefers it still runs (on the global pool), and a sleep says
        // it did not happen, at once, so its caller can sleep on a clock instead.
        let later = Task(executorPreference: pacer) { () async -> (Bool, String?) in
            (await pacer.sleep(nanoseconds: Self.hour), Self.threadName())
        }
        let (slept, name) = await later.value
        #expect(!slept)
        #expect(name != "opl-test-pace")
        await pacer.shutdown()  // a second shutdown does nothing
    }

    /// The calling thread's nice value (Linux: `/proc/thread-self/stat`, field 19), `nil` elsewhere.
    static func threadNice() -> Int? {
        #if os(Linux)
            guard let text = try? String(contentsOfFile: "/proc/thread-self/stat", encoding: .utf8),
                let close = text.lastIndex(of: ")")
            else { return nil }
            let fields = text[text.index(after: close)...].split(separator: " ")
            return fields.count > 16 ? Int(fields[16]) : nil  // fields from the third on
        #else
            return nil
        #endif
    }

    final class Made: Sendable {
        let pacer = Mutex<PacingExecutor?>(nil)
    }

    /// Its thread runs at the priority of the thread that made it: a driver started with `nice`
    /// keeps its schedule there, and one at normal priority is not lowered.
    @Test func itsThreadKeepsThePriorityOfItsCreator() async throws {
        #if os(Linux)
            let made = Made()
            let creator = try LowPriorityThread.start(name: "opl-test-nice", nice: 3) {
                made.pacer.withLock { $0 = try? PacingExecutor(name: "opl-test-pace") }
            }
            creator.join()
            let pacer = try #require(made.pacer.withLock { $0 })
            let nice = await withTaskExecutorPreference(pacer) { Self.threadNice() }
            #expect(nice == 3)
            await pacer.shutdown()
        #endif
    }

    /// A task that still prefers the executor can shut it down without waiting for itself.
    @Test func aTaskOnItsThreadCanShutItDown() async throws {
        let pacer = try PacingExecutor(name: "opl-test-pace")
        let done = await withTaskExecutorPreference(pacer) { () async -> Bool in
            _ = await pacer.sleep(nanoseconds: 1_000)
            await pacer.shutdown()
            return true
        }
        #expect(done)
    }
}
