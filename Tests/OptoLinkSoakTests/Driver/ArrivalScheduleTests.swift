import Testing

import OptoLinkSoak

@Suite("Open-model scheduler")
struct ArrivalScheduleTests {
    @Test("a constant rate gives R·D evenly spaced starts at the half-steps")
    func constant() {
        let times = Array(ArrivalSchedule(startRate: 10, stages: [.init(duration: 2, target: 10)]))
        #expect(times.count == 20)
        for (k, t) in times.enumerated() { #expect(abs(t - (Double(k) + 0.5) / 10) < 1e-9) }
    }

    @Test("a linear ramp from 0 to R over D gives R·D/2 starts with cumulative count t²·R/(2D)")
    func ramp() {
        let times = Array(ArrivalSchedule(startRate: 0, stages: [.init(duration: 10, target: 100)]))
        #expect(times.count == 500)
        for (k, t) in times.enumerated() {
            // Λ(t) = 100 t² / 20 = 5 t² must equal k + ½.
            #expect(abs(5 * t * t - (Double(k) + 0.5)) < 1e-6)
        }
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 })
    }

    @Test("after the stages the last target holds until the duration")
    func hold() {
        let times = Array(ArrivalSchedule(startRate: 4, stages: [.init(duration: 1, target: 4)], duration: 3))
        #expect(times.count == 12)
        #expect(times.last! < 3)
    }

    @Test("a stage at rate 0 schedules nothing and the next stage ramps up from 0")
    func pause() {
        let times = Array(
            ArrivalSchedule(startRate: 0, stages: [.init(duration: 5, target: 0), .init(duration: 2, target: 2)]))
        #expect(times.count == 2)
        #expect(times.allSatisfy { $0 >= 5 })
    }
}
