import Foundation
import OptoLinkStaging

/// The embedded staging emulator on 127.0.0.1:0, configured from the profile's `backend`
/// section with `trustForwardedFor` on (virtual devices send their IP as `X-Forwarded-For`).
///
/// HOOK (staging): until the emulator lands on this branch, starting it fails with a clear
/// message; pass `--base-url` to drive a running emulator (`optolink-soak serve`).
public struct EmbeddedBackend: SoakBackend {
    public let baseURL: URL
    public var kind: String { "embedded" }

    /// Starts the emulator.
    /// - Throws: ``SoakProfileError`` when `backend` does not decode or the server cannot start.
    public static func start(_ profile: SoakProfile) async throws -> EmbeddedBackend {
        throw SoakProfileError(message: "backend: the embedded emulator is not part of this build; use --base-url")
    }

    public func ledger() async throws -> [StagingLedgerEntry]? { nil }
    public func counters() async -> JSONValue? { nil }
    public func stop() async {}
}
