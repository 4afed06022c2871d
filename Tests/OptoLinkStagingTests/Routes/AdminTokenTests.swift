import Foundation
import OptoLinkHTTP
import OptoLinkStaging
import Testing

/// The admin door: with an admin token, `/__admin/*` answers only `Authorization: Bearer <token>`.
@Suite struct AdminTokenTests {
    static let token = "adm-Zq81-token-0042"

    func respond(_ backend: StagingBackend, _ method: String, _ path: String, authorization: String?) -> HTTPResponse? {
        var headers = HTTPHeaders()
        if let authorization { headers.add("Authorization", authorization) }
        let request = HTTPRequest(method: method, target: path, headers: headers, body: [])
        let result = backend.handle(
            request, HTTPConnectionInfo(peerAddress: "127.0.0.1", peerPort: 50_000, connectionId: 1))
        guard case .respond(let response) = result else { return nil }
        return response
    }

    @Test("a missing, wrong, differently long or schemeless token is 401 in the error envelope; the token is 200")
    func countersNeedTheToken() throws {
        let backend = StagingBackend(configuration: StagingConfiguration(), adminToken: Self.token)
        let refused: [String?] = [
            nil, "Bearer wrong", "Bearer \(Self.token)x", "Bearer \(Self.token.dropLast())", Self.token,
            "Basic \(Self.token)",
            "Bearer ",
        ]
        for authorization in refused {
            let response = try #require(respond(backend, "GET", "/__admin/counters", authorization: authorization))
            #expect(response.status == 401, "\(authorization ?? "no header")")
            let body = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
            #expect(body["statusCode"] as? Int == 401)
            #expect((body["message"] as? String)?.contains("Authorization: Bearer") == true)
            #expect(!String(decoding: response.body, as: UTF8.self).contains(Self.token))
        }
        let allowed = try #require(respond(backend, "GET", "/__admin/counters", authorization: "Bearer \(Self.token)"))
        #expect(allowed.status == 200)
        let lowercase = try #require(
            respond(backend, "GET", "/__admin/counters", authorization: "bearer \(Self.token)"))
        #expect(lowercase.status == 200, "the scheme is case-insensitive (RFC 9110 §11.1)")
    }

    @Test("every admin route is behind the token: reset, ledger, faults, limits, peer and health")
    func everyAdminRouteIsBehindTheToken() throws {
        let backend = StagingBackend(configuration: StagingConfiguration(), adminToken: Self.token)
        let routes = [
            ("POST", "/__admin/reset"), ("GET", "/__admin/ledger"), ("GET", "/__admin/faults"),
            ("PUT", "/__admin/faults"), ("GET", "/__admin/limits"), ("PUT", "/__admin/limits"),
            ("GET", "/__admin/peer"), ("GET", "/__admin/health"),
        ]
        for (method, path) in routes {
            #expect(respond(backend, method, path, authorization: nil)?.status == 401, "\(method) \(path)")
            #expect(respond(backend, method, path, authorization: "Bearer wrong")?.status == 401, "\(method) \(path)")
        }
        #expect(respond(backend, "POST", "/__admin/reset", authorization: "Bearer \(Self.token)")?.status == 200)
        let health = try #require(respond(backend, "GET", "/__admin/health", authorization: "Bearer \(Self.token)"))
        #expect(health.status == 200)
        #expect(String(decoding: health.body, as: UTF8.self) == #"{"ok":true}"#)
    }

    @Test("without a token health stays open, for the probes of a loopback emulator")
    func healthIsOpenWithoutAToken() {
        let backend = StagingBackend(configuration: StagingConfiguration())
        #expect(respond(backend, "GET", "/__admin/health", authorization: nil)?.status == 200)
    }

    @Test("without a token the admin routes stay open, as before")
    func noTokenLeavesTheDoorOpen() throws {
        let backend = StagingBackend(configuration: StagingConfiguration())
        #expect(respond(backend, "GET", "/__admin/counters", authorization: nil)?.status == 200)
        #expect(respond(backend, "GET", "/__admin/counters", authorization: "Bearer anything")?.status == 200)
    }
}
