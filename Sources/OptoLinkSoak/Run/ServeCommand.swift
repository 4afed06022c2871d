import Foundation
import OptoLinkHTTP
import OptoLinkStaging

/// `optolink-soak serve`: the staging emulator in the foreground until Ctrl-C.
enum ServeCommand {
    static func run(_ options: ServeOptions) async -> Int32 {
        let configuration: StagingConfiguration
        do {
            configuration = try resolve(options)
        } catch {
            FileHandle.standardError.write(Data("error: serve: \(error.localizedDescription)\n".utf8))
            return 2
        }
        // Refused before anything binds: an open admin door is never reachable, even briefly.
        let adminToken: String?
        do {
            adminToken = try AdminDoor.token(
                host: configuration.host, file: options.adminTokenFile, environment: ProcessInfo.processInfo.environment
            )
        } catch {
            FileHandle.standardError.write(Data("error: serve: \(error)\n".utf8))
            return 2
        }
        let server = StagingServer(configuration: configuration, adminToken: adminToken)
        if let path = options.ledgerFilePath {
            do {
                try server.backend.streamLedger(to: URL(fileURLWithPath: path))
            } catch {
                FileHandle.standardError.write(
                    Data("error: serve: --ledger-file \(path): cannot create (\(error.localizedDescription))\n".utf8))
                return 2
            }
        }
        do {
            try await server.start()
        } catch let error as HTTPServerError {
            let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
            let cause: String
            if case .systemCall(_, let code) = error {
                cause = String(cString: strerror(code))
            } else {
                cause = "\(error)"
            }
            FileHandle.standardError.write(
                Data("error: serve: cannot listen on \(host):\(configuration.port): \(cause)\n".utf8))
            return 2
        } catch {
            FileHandle.standardError.write(Data("error: serve: \(error.localizedDescription)\n".utf8))
            return 2
        }
        // The trap goes in before the banner, so a Ctrl-C sent as soon as the URL shows stops gracefully.
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        let trap = SignalTrap { continuation.finish() }
        // Unbuffered, so a script or test reading a pipe sees the bound port at once; the URL line stays first.
        let banner =
            ["optolink-soak serve: staging emulator on \(server.baseURL.absoluteString) (Ctrl-C to stop)"]
            + server.summary(showKeys: options.showKeys).dropFirst().map { "  " + $0 }
        FileHandle.standardOutput.write(Data((banner.joined(separator: "\n") + "\n").utf8))
        // A ledger file reaches the disk at least once a second, so a reader tailing it stays current;
        // every 10 s glibc's free heap pages go back to the kernel, so a long serve's RSS follows what
        // the emulator holds (see ProcessMemory.releaseFreeHeap()).
        let flusher = Task {
            var second = 0
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                server.backend.flushLedger()
                second += 1
                if second % 10 == 0 { ProcessMemory.releaseFreeHeap() }
            }
        }
        for await _ in stream {}
        flusher.cancel()
        trap.cancel()
        await server.stop()
        if let failure = server.backend.flushLedger() {
            FileHandle.standardError.write(Data("error: serve: --ledger-file: \(failure)\n".utf8))
            return 2
        }
        return 0
    }

    /// The configuration to serve: the `--config` file (strictly decoded), then `--host`,
    /// `--port` and `--trust-forwarded-for` when given; host and port not set anywhere are
    /// `127.0.0.1` and `8080`.
    ///
    /// - Throws: ``StagingConfigurationError`` `<file>: <field path>: <problem>`.
    static func resolve(_ options: ServeOptions) throws -> StagingConfiguration {
        var configuration = StagingConfiguration(port: 8080)
        if let path = options.configPath {
            if let problem = PathProblem.readingFile(path, as: "configuration") {
                throw StagingConfigurationError(message: "--config \(problem)")
            }
            let data: Data
            do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
                throw StagingConfigurationError(message: "\(path): cannot read (\(error.localizedDescription))")
            }
            configuration = try StagingConfiguration.decode(data, source: path)
            let keys = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
            if keys["port"] == nil { configuration.port = 8080 }
            for note in StagingLimits.deprecatedKeys(inConfigurationJSON: keys) {
                FileHandle.standardError.write(Data("note: serve: \(path): \(note)\n".utf8))
            }
        }
        if let host = options.host { configuration.host = host }
        if let port = options.port { configuration.port = port }
        if options.trustForwardedFor { configuration.trustForwardedFor = true }
        return configuration
    }
}
