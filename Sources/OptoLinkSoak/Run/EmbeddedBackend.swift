import Foundation
import OptoLinkStaging
import SoakSupport

/// The embedded staging emulator on 127.0.0.1:0, configured from the profile's `backend`
/// section (a `StagingConfiguration`: limits, windows, faults) with `trustForwardedFor`
/// forced on, since virtual devices send their simulated IP as `X-Forwarded-For` — or off
/// under `--local-ips` (`devices.localIPs`), where each device's address is the socket peer.
package struct EmbeddedBackend: SoakBackend {
    package let server: StagingServer
    package var baseURL: URL { server.baseURL }
    package var kind: String { "embedded" }

    /// The emulator configuration a profile asks for.
    /// - Throws: ``SoakProfileError`` `backend…: <problem>` when the section does not decode or validate.
    package static func configuration(for profile: SoakProfile) throws -> StagingConfiguration {
        var configuration = StagingConfiguration()
        if let section = profile.backend {
            do {
                configuration = try StagingConfiguration.decode(JSONEncoder().encode(section), source: "backend")
            } catch let error as StagingConfigurationError {
                throw SoakProfileError(message: error.message)
            }
        }
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.trustForwardedFor = profile.devices.localIPs == nil
        return configuration
    }

    /// Starts the emulator for `profile`, its windows and limits on `clock` (tests pass a virtual one).
    /// - Throws: ``SoakProfileError`` for a bad `backend` section or when the server cannot bind.
    package static func start(_ profile: SoakProfile, clock: StagingClock = .system) async throws -> EmbeddedBackend {
        let server = StagingServer(configuration: try configuration(for: profile), clock: clock)
        do {
            try await server.start()
        } catch {
            throw SoakProfileError(message: "backend: the embedded emulator did not start (\(error))")
        }
        return EmbeddedBackend(server: server)
    }

    package func ledger() async throws -> [LedgerRow]? { server.ledger().map(LedgerRow.init) }

    @Sendable package func retained() -> EmulatorRetained? { EmulatorRetained(server.backend.retained()) }

    /// Streams the emulator's ledger to `file` and hands each entry to `sink` as it is stored.
    package func followLedger(file: URL, sink: @escaping @Sendable (LedgerRow) -> Void) throws -> Bool {
        try server.backend.streamLedger(to: file)
        server.backend.observeLedger { sink(LedgerRow($0)) }
        return true
    }

    package func counters() async -> JSONValue? {
        guard let data = try? JSONEncoder().encode(server.counters()) else { return nil }
        return try? JSONDecoder().decode(JSONValue.self, from: data)
    }

    package func stop() async {
        await server.stop()
        server.backend.flushLedger()
    }

    /// Counts the profile's outage windows from the run's start.
    package func runStarted(atEpoch epoch: Double) { server.startOutageWindows(at: epoch) }
}
