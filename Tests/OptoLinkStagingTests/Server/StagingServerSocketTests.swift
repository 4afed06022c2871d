import Foundation
import OptoLinkHTTP
import OptoLinkStaging
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The emulator on a real socket, driven with plain URLSession requests.
@Suite(.timeLimit(.minutes(1))) struct StagingServerSocketTests {
    static let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 5
        return URLSession(configuration: configuration)
    }()

    func fetch(
        _ server: StagingServer, _ method: String, _ path: String, headers: [String: String] = [:], body: String? = nil
    ) async throws -> (Int, [String: String], String) {
        var request = URLRequest(url: server.baseURL.appendingPathComponent(path))
        if path.contains("?") {
            request = URLRequest(url: try #require(URL(string: server.baseURL.absoluteString + path)))
        }
        request.httpMethod = method
        for (k, v) in headers { request.setValue(v, forHTTPHeaderField: k) }
        if let body {
            request.httpBody = Data(body.utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await Self.session.data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        var fields: [String: String] = [:]
        for (k, v) in http.allHeaderFields { fields["\(k)".lowercased()] = "\(v)" }
        return (http.statusCode, fields, String(decoding: data, as: UTF8.self))
    }

    @Test func servesDefaultFixturesOnAnEphemeralPort() async throws {
        try await withStagingServer { server in
            #expect(server.port > 0)
            #expect(server.baseURL.absoluteString == "http://127.0.0.1:\(server.port)")
            let (status, _, body) = try await fetch(server, "GET", "/acme/welcome/data?deviceId=device-0001")
            #expect(status == 200)
            #expect(body == #"{"linkId":"lnk_welcome","path":"/welcome","params":{"campaign":"spring"}}"#)
            let (aasaStatus, headers, _) = try await fetch(server, "GET", "/.well-known/apple-app-site-association")
            #expect(aasaStatus == 200)
            #expect(headers["cache-control"] == "public, max-age=3600")
            let (sessionStatus, _, _) = try await fetch(
                server, "POST", "/sdk/session", headers: ["Authorization": "Bearer opl_sdk_test_acme_client"],
                body: #"{"deviceId":"device-0001","platform":"iOS","osVersion":"18.1","sdkVersion":"0.1.0"}"#)
            #expect(sessionStatus == 200)
            let (ledgerStatus, _, ledger) = try await fetch(server, "GET", "/__admin/ledger")
            #expect(ledgerStatus == 200)
            let entries = try JSONDecoder().decode([StagingLedgerEntry].self, from: Data(ledger.utf8))
            #expect(entries.map(\.endpoint) == ["session"])
            #expect(server.ledger() == entries)
        }
    }

    @Test func ledgerFileAndSummary() async throws {
        try await withStagingServer { server in
            _ = try await fetch(
                server, "POST", "/sdk/session", headers: ["Authorization": "Bearer opl_sdk_test_acme_client"],
                body: #"{"deviceId":"device-0001"}"#)
            let url = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-\(UUID().uuidString).json")
            defer { try? FileManager.default.removeItem(at: url) }
            try server.writeLedger(to: url)
            let decoded = try JSONDecoder().decode([StagingLedgerEntry].self, from: Data(contentsOf: url))
            #expect(decoded == server.ledger())
            #expect(decoded.count == 1)
            let summary = server.summary()
            #expect(summary.first == "OptoLink staging emulator on http://127.0.0.1:\(server.port)")
            #expect(summary.contains { $0.contains("opl_sdk_test_… (CLIENT)") && $0.contains("expired (inactive)") })
            #expect(!summary.joined().contains("acme_client"), "keys are redacted unless asked for")
            #expect(summary.contains { $0.contains("--show-keys prints them whole") })
            let whole = server.summary(showKeys: true)
            #expect(whole.contains { $0.contains("opl_sdk_test_acme_client (CLIENT)") })
            #expect(whole.contains { $0.contains("Authorization: Bearer opl_sdk_test_acme_client ") })
            #expect(!whole.contains { $0.contains("--show-keys") })
            #expect(
                summary.contains { $0.contains("match 30/60s, data 500/1s, session_identity 60/60s, events 600/60s") })
        }
    }

    @Test func invalidConfigurationIsRefusedBeforeBinding() async {
        var configuration = StagingConfiguration()
        configuration.limits.match.limit = 0
        await #expect(throws: StagingConfigurationError.self) {
            try await withStagingServer(configuration) { _ in }
        }
    }
}
