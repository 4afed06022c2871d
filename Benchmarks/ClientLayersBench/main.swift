// optolink-client-bench: the driver's lower layers alone, for Benchmarks/peers.sh.
//
//   optolink-client-bench --base-url http://127.0.0.1:PORT --layer client|sdk
//                         [--seconds 10] [--connections 64] [--loops 2] [--device-id ID] [--api-key KEY]
//
// `client`: the native HTTP client sends `POST /sdk/events` (the SDK's headers and body) from
// `--connections` tasks in a closed loop, each on a client loop thread as the driver's devices are.
// `sdk`: as many SDK instances over the native transport, each calling `trackEvent` in a closed
// loop (its retry loop, deadline and JSON body included), without the soak's journeys, recorder,
// CSV rows or verdicts. Both warm up for 1 s, then count the 200s of the next `--seconds`.
// Prints one JSON object: layer, requests (all sent), counted, rate (requests/s in the window),
// errors. The caller measures the process's CPU (peers.py: rusage of the child).
//
//   optolink-client-bench csv-read --file PATH [--rows N]
//
// Times reading a run's `attempts.csv` back instead (CSVReadBench.swift, Benchmarks/csv-read.sh).
import Foundation
import OptoLink
import OptoLinkHTTP
import OptoLinkSoak
import Synchronization

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(2)
}

if CommandLine.arguments.dropFirst().first == "csv-read" {
    csvReadBench(Array(CommandLine.arguments.dropFirst(2)))
    exit(0)
}

let usage =
    "usage: optolink-client-bench --base-url http://127.0.0.1:PORT --layer client|sdk [--seconds S] "
    + "[--connections N] [--loops N] [--device-id ID] [--api-key KEY]"
var options: [String: String] = [
    "--seconds": "10", "--connections": "64", "--loops": "2",
    "--device-id": "b3b1c7de-0000-4000-8000-00000000be0c", "--api-key": "opl_sdk_test_acme_client",
]
var arguments = CommandLine.arguments.dropFirst()
while let flag = arguments.popFirst() {
    guard ["--base-url", "--layer", "--seconds", "--connections", "--loops", "--device-id", "--api-key"].contains(flag)
    else { fail("unknown flag \(flag)\n\(usage)") }
    guard let value = arguments.popFirst() else { fail("missing value for \(flag)\n\(usage)") }
    options[flag] = value
}
guard let base = options["--base-url"].flatMap(URL.init(string:)), base.scheme == "http", let host = base.host,
    let port = base.port
else { fail("--base-url must be http://HOST:PORT\n\(usage)") }
guard let layer = options["--layer"], ["client", "sdk"].contains(layer) else { fail("--layer client|sdk\n\(usage)") }
guard let seconds = options["--seconds"].flatMap(Double.init), seconds > 0, seconds <= 600,
    let connections = options["--connections"].flatMap(Int.init), (1...4096).contains(connections),
    let loops = options["--loops"].flatMap(Int.init), (1...64).contains(loops)
else { fail("--seconds in (0, 600], --connections in 1...4096, --loops in 1...64\n\(usage)") }
let deviceId = options["--device-id"]!
let apiKey = options["--api-key"]!

let client: HTTPClient
do {
    client = try HTTPClient(
        configuration: .init(maxConnectionsPerHost: connections, loopCount: min(loops, connections)))
} catch {
    fail("optolink-client-bench: the HTTP client did not start: \(error)")
}

/// Counts what the workers see; the window opens after the warm-up second.
final class Tally: Sendable {
    let sent = Atomic<Int>(0)
    let ok = Atomic<Int>(0)
    let errors = Atomic<Int>(0)
    let stop = Atomic<Bool>(false)

    func record(success: Bool) {
        sent.add(1, ordering: .relaxed)
        if success { ok.add(1, ordering: .relaxed) } else { errors.add(1, ordering: .relaxed) }
    }
}
let tally = Tally()
let executors = client.taskExecutors

/// One worker of the `client` layer: the request the SDK sends for `trackEvent` (its headers and
/// body), without the SDK.
@Sendable func clientWorker(_ index: Int) async {
    let body = Array(#"{"deviceId":"\#(deviceId)","eventName":"bench","properties":{"k":"v"}}"#.utf8)
    let headers: HTTPHeaders = [
        "X-API-Key": apiKey, "X-OptoLink-SDK": OptoLinkVersion.auditHeader, "Accept": "application/json",
        "Authorization": "Bearer \(apiKey)", "Content-Type": "application/json",
    ]
    let request = HTTPClientRequest(
        method: "POST", host: host, port: port, target: "/sdk/events", headers: headers, body: body)
    while !tally.stop.load(ordering: .relaxed) {
        do {
            let response = try await client.execute(request, timeout: .seconds(5))
            tally.record(success: response.status == 200)
        } catch {
            tally.record(success: false)
        }
    }
}

/// One worker of the `sdk` layer: an SDK instance over the native transport, `trackEvent` in a loop.
@Sendable func sdkWorker(_ index: Int, transport: NativeTransport) async {
    let config = OptoLinkConfig(apiKey: apiKey, orgKey: "acme", baseUrl: base, timeout: 5, maxRetries: 2)
    let environment = OptoLinkEnvironment(
        store: InMemoryKeyValueStore(), pasteboard: InMemoryPasteboard(),
        deviceInfo: OptoLinkDeviceInfo(osVersion: "18.1", deviceModel: "iPhone15,2", language: "en"),
        transport: transport.running(on: executors[index % executors.count]), label: "d\(index)#1")
    let sdk = OptoLink(config: config, environment: environment)
    await sdk.start()
    while !tally.stop.load(ordering: .relaxed) {
        do {
            try await sdk.trackEvent(name: "bench", properties: ["k": "v"])
            tally.record(success: true)
        } catch {
            tally.record(success: false)
        }
    }
    sdk.dispose()
}

let transport = NativeTransport(client: client)
var counted = 0
await withTaskGroup(of: Void.self) { group in
    for index in 0..<connections {
        group.addTask(executorPreference: executors[index % executors.count]) {
            if layer == "client" { await clientWorker(index) } else { await sdkWorker(index, transport: transport) }
        }
    }
    try? await Task.sleep(for: .seconds(1))
    let before = tally.ok.load(ordering: .relaxed)
    try? await Task.sleep(for: .seconds(seconds))
    counted = tally.ok.load(ordering: .relaxed) - before
    tally.stop.store(true, ordering: .relaxed)
}
await client.shutdown()
let result: [String: Any] = [
    "layer": layer, "requests": tally.sent.load(ordering: .relaxed), "counted": counted,
    "rate": Double(counted) / seconds, "errors": tally.errors.load(ordering: .relaxed),
]
if let json = try? JSONSerialization.data(withJSONObject: result, options: [.sortedKeys]) {
    print(String(decoding: json, as: UTF8.self))
}
