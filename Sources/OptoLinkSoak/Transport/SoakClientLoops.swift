import Foundation
import OptoLinkHTTP

/// How many event loop threads the native transport runs, and which one each virtual device's
/// journeys run on.
///
/// The journeys run *on* the loop threads (each loop is a task executor): a request a journey
/// sends and the response that resumes it stay on one thread, with no hand-off to the global
/// pool and no wake-up in between, which cuts the driver's CPU per request.
package enum SoakClientLoops {
    /// One loop per core (at least 1). Beside `serve` on 2 cores, 1 loop spends less CPU per
    /// request than 2 at about the same closed-model rate, but it caps the driver at one core: at
    /// 5,000 journeys/s starts fall behind (p99 start lag near 100 ms against tens of ms with 2
    /// loops). A load tool must not become the bottleneck, so the default is every core.
    package static func `default`(cores: Int = ProcessInfo.processInfo.activeProcessorCount) -> Int {
        Swift.max(1, cores)
    }

    /// The loop count of a run: `requested` (`--client-loops`) or ``default(cores:)``, but at most
    /// `connections` (`--connections`) in the shared pool mode, where every loop holds its own
    /// share of the connections, so `--connections 1` means one connection, not one per loop. A
    /// requested count that is cut says so through `log`.
    package static func count(
        requested: Int?, pool: HTTPClient.PoolMode, connections: Int, log: (String) -> Void,
        cores: Int = ProcessInfo.processInfo.activeProcessorCount
    ) -> Int {
        let wanted = requested ?? Self.default(cores: cores)
        guard pool == .shared, connections < wanted else { return wanted }
        if let requested {
            log(
                "--client-loops \(requested) cut to \(connections): a shared pool of --connections \(connections) "
                    + "has one connection per loop at most")
        }
        return Swift.max(1, connections)
    }

    /// Response limits of the native transport: 64 KiB of head, 1 MiB of body (the contract's
    /// bodies are a few KB). With the client's default of 16 MiB, a proxy that streams a large page
    /// could make every connection hold 16 MiB before the response fails as too large: 2 GiB at
    /// the default 128 connections, or 16 MiB per device in the per-device mode.
    package static let responseLimits = HTTPResponseParser.Limits(maxHeaderBytes: 64 * 1024, maxBodyBytes: 1 << 20)

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
