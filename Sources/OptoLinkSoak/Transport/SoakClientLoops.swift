import Foundation
import OptoLinkHTTP

/// How many event loop threads the native transport runs, and which one each virtual device's
/// journeys run on.
///
/// The journeys run *on* the loop threads (each loop is a task executor): a request a journey
/// sends and the response that resumes it stay on one thread, with no hand-off to the global
/// pool and no wake-up in between, which cuts the driver's CPU per request (figures in
/// `Benchmarks/peers.md`, "Journeys on the loop threads").
package enum SoakClientLoops {
    /// Half the cores (at least 1) when the backend is on this machine (a loopback host: the
    /// embedded emulator, or `serve` beside the run), every core for a backend elsewhere.
    /// Measured beside `serve` on 2 cores, 1 loop spent 22-28 % less CPU per request than 2 at
    /// about the same rate (`Benchmarks/peers.md`).
    package static func `default`(
        baseURL: URL, cores: Int = ProcessInfo.processInfo.activeProcessorCount
    ) -> Int {
        let cores = Swift.max(1, cores)
        return isLoopback(baseURL) ? Swift.max(1, cores / 2) : cores
    }

    /// `localhost`, `127.0.0.0/8` and `::1`.
    package static func isLoopback(_ url: URL) -> Bool {
        guard var host = url.host?.lowercased() else { return false }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    /// The executor of each device, by device id: in the per-device pool mode the loop that
    /// holds the device's connection; in the shared mode the loops in turn, so they get equal shares.
    package static func executors(of client: HTTPClient, for devices: [VirtualDevice]) -> [String: any TaskExecutor] {
        let loops = client.taskExecutors
        var executors: [String: any TaskExecutor] = [:]
        executors.reserveCapacity(devices.count)
        for (index, device) in devices.enumerated() {
            executors[device.id] =
                client.configuration.poolMode == .shared
                ? loops[index % loops.count] : client.taskExecutor(forPartition: device.id)
        }
        return executors
    }
}
