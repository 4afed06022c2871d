// What an app developer's test would do with OptoLinkTestSupport, outside this repository's
// targets: a scripted transport with a delayed reply on a manual clock, a spy pasteboard in the
// in-memory environment, waiting for requests at one endpoint. Exits 1 on the first mismatch.
import Foundation
import OptoLink
import OptoLinkTestSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

func check(_ condition: Bool, _ what: String) {
    guard condition else {
        FileHandle.standardError.write(Data("consumer-check FAILED: \(what)\n".utf8))
        exit(1)
    }
    print("ok  \(what)")
}

let config = OptoLinkConfig(
    apiKey: "opl_sdk_consumer", orgKey: "acme", baseUrl: URL(string: "https://api.optolink.test")!)
let hit =
    #"{"matched":true,"matchMethod":"CLIPBOARD","matchConfidence":"exact","linkId":"l1","path":"/p","params":{}}"#

// A first launch whose /match answers after 2 s of virtual time, with a click token on the clipboard.
let transport = StubTransport()
let clock = ManualClock()
let pasteboard = SpyPasteboard("opl_consumer1")
transport.enqueue([.after(.seconds(2), on: clock, .status(201, hit))], for: .match)
let sdk = OptoLink(config: config, environment: .inMemory(transport: transport, pasteboard: pasteboard, clock: clock))
let start = Task { await sdk.start() }
await transport.waitForRequests(1, to: .match)
await clock.waitForSleep(.seconds(2))
clock.advance(by: .seconds(2))
await start.value
check(pasteboard.accesses == [.read("opl_consumer1"), .clear], "the clipboard was read once and cleared on the hit")
check(transport.requests(for: .session).isEmpty, "a hit sends no session check-in")

// Every attempt timing out, said explicitly.
let timeouts = StubTransport()
timeouts.setDefault(.hang, for: .events)
let recording = RecordingClock(attemptDeadlines: .expireEveryAttempt)
var quick = config
quick.maxRetries = 1
let timingOut = OptoLink(config: quick, environment: .inMemory(transport: timeouts, clock: recording))
do {
    try await timingOut.trackEvent(name: "e")
    check(false, "a hanging transport with expiring deadlines must throw")
} catch {
    check(error is OptoLinkConnectionError, "expireEveryAttempt makes the call time out")
}
check(recording.sleeps == [.milliseconds(500)], "one back-off between the two attempts")

// Hand-written doubles can use the public lock and gate.
let seen = TestLock(0)
let gate = Gate()
let waiter = Task {
    await gate.wait()
    seen.withLock { $0 += 1 }
}
gate.open()
await waiter.value
check(seen.withLock { $0 } == 1, "TestLock and Gate are usable from another package")
print("consumer-check: OptoLinkTestSupport is importable and works from a separate package")
