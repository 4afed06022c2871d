import Foundation
import Synchronization
import Testing

import OptoLinkSoak

/// The trap in this process, on SIGUSR1/SIGUSR2 (nothing else here uses them): its handler is in
/// place when the initializer returns, every trap on a signal hears it, and a cancelled trap
/// leaves the signal ignored rather than fatal.
@Suite("signal trap", .serialized, .timeLimit(.minutes(1)))
struct SignalTrapTests {
    /// Polls `condition` every 5 ms for at most 30 s (a condition that holds returns at once).
    private func eventually(_ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return condition()
    }

    @Test("a signal raised the instant the trap is made reaches its handler, 20 times")
    func signalRightAfterInitIsHandled() async {
        for round in 1...20 {
            let calls = Atomic<Int>(0)
            let trap = SignalTrap(signal: SIGUSR1) { calls.add(1, ordering: .relaxed) }
            kill(getpid(), SIGUSR1)
            #expect(await eventually { calls.load(ordering: .relaxed) == 1 }, "round \(round)")
            trap.cancel()
        }
    }

    @Test("two traps on one signal both hear it; after both cancel, the signal is ignored")
    func twoTrapsThenIgnored() async {
        let first = Atomic<Int>(0)
        let second = Atomic<Int>(0)
        let a = SignalTrap(signal: SIGUSR2) { first.add(1, ordering: .relaxed) }
        let b = SignalTrap(signal: SIGUSR2) { second.add(1, ordering: .relaxed) }
        kill(getpid(), SIGUSR2)
        #expect(await eventually { first.load(ordering: .relaxed) == 1 && second.load(ordering: .relaxed) == 1 })
        a.cancel()
        kill(getpid(), SIGUSR2)
        #expect(await eventually { second.load(ordering: .relaxed) == 2 })
        #expect(first.load(ordering: .relaxed) == 1, "a cancelled trap is not called")
        b.cancel()
        // Ignored now: this would end the test process if the disposition were the default.
        kill(getpid(), SIGUSR2)
        try? await Task.sleep(for: .milliseconds(50))
        #expect(second.load(ordering: .relaxed) == 2)
    }
}
