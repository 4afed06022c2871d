import Foundation
import OptoLinkStaging

/// `optolink-soak serve`: the staging emulator in the foreground until Ctrl-C.
enum ServeCommand {
    static func run(_ options: SoakCommand.ServeOptions) async -> Int32 {
        var configuration = StagingConfiguration()
        if let path = options.configPath {
            do {
                configuration = try StagingConfiguration.load(from: URL(fileURLWithPath: path))
            } catch {
                FileHandle.standardError.write(Data("error: --config: \(error.localizedDescription)\n".utf8))
                return 2
            }
        }
        configuration.host = options.host
        configuration.port = options.port
        if options.trustForwardedFor { configuration.trustForwardedFor = true }
        let server = StagingServer(configuration: configuration)
        do {
            try await server.start()
        } catch {
            FileHandle.standardError.write(Data("error: serve: \(error)\n".utf8))
            return 2
        }
        // Unbuffered, so a script or test reading a pipe sees the bound port at once.
        FileHandle.standardOutput.write(
            Data("optolink-soak serve: staging emulator on \(server.baseURL.absoluteString) (Ctrl-C to stop)\n".utf8))
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        let trap = SignalTrap { continuation.finish() }
        for await _ in stream {}
        trap.cancel()
        await server.stop()
        return 0
    }
}
