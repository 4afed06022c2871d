import Foundation
import OptoLinkHTTP
import OptoLinkStaging
import Testing

/// docs/CONTRACT.md §1: success bodies, validation rows, auth rows and the error envelope.
@Suite struct ContractRoutesTests {
    let h = BackendHarness()

    @Test func sessionAnswersOkWithFirstAndLastSeen() throws {
        let first = try h.session("device-0001")
        #expect(first.status == 200)
        let a = try first.json()
        #expect(a["ok"] as? Bool == true)
        #expect(a["deviceId"] as? String == "device-0001")
        #expect(Set(a.keys) == ["ok", "deviceId", "firstSeenAt", "lastSeenAt"])
        h.time.advance(5)
        let b = try h.session("device-0001").json()
        #expect(b["firstSeenAt"] as? String == a["firstSeenAt"] as? String)
        #expect(b["lastSeenAt"] as? String != a["lastSeenAt"] as? String)
        #expect((b["lastSeenAt"] as? String)?.hasSuffix("Z") == true)
    }

    @Test func identityClearAndEventsAnswerTheirExactBodies() throws {
        _ = try h.session("device-0001")
        let identity = try h.sdk("/sdk/identity", ["deviceId": "device-0001", "externalId": "user-4711"])
        #expect(identity.status == 200)
        let body = try identity.json()
        #expect(Set(body.keys) == ["endUserId", "rebound"])
        #expect(body["rebound"] as? Bool == false)
        let again = try h.sdk("/sdk/identity", ["deviceId": "device-0001", "externalId": "user-9000"]).json()
        #expect(again["rebound"] as? Bool == true)
        let clear = try h.sdk("/sdk/identity/clear", ["deviceId": "device-0001"])
        #expect(clear.status == 200)
        #expect(clear.text == #"{"cleared":true}"#)
        let event = try h.event("device-0001", properties: ["opl_corr": "run:1:1"])
        #expect(event.status == 200)
        #expect(event.text == #"{"ok":true}"#)
        #expect(event.headers["Content-Type"]?.hasPrefix("application/json") == true)
    }

    @Test func dataAnswersLinkOr404Or410() throws {
        let ok = try h.respond("GET", "/acme/promo/data?deviceId=device-0001")
        #expect(ok.status == 200)
        #expect(ok.text == #"{"linkId":"lnk_promo","path":"/promo/summer","params":{"code":"SUMMER","ref":"mail"}}"#)
        let missing = try h.respond("GET", "/acme/nope/data")
        #expect(missing.status == 404)
        #expect(try missing.message() == "Link not found")
        let unknownOrg = try h.respond("GET", "/initech/welcome/data")
        #expect(unknownOrg.status == 404)
        let expired = try h.respond("GET", "/acme/expired/data")
        #expect(expired.status == 410)
        #expect(try expired.json()["error"] as? String == "Gone")
        let globex = try h.respond("GET", "/globex/hello/data").text
        #expect(globex == #"{"linkId":"lnk_globex_hello","path":"/hello","params":null}"#)
    }

    @Test func dataDeviceIdRegistersTheDevice() throws {
        #expect(try h.event("device-0002").status == 404)
        _ = try h.respond("GET", "/acme/welcome/data?deviceId=device-0002")
        #expect(try h.event("device-0002").status == 200)
    }

    @Test func envelopeHasExactKeysAndEchoesRequestIdOnlyWhenSent() throws {
        let plain = try h.respond("GET", "/acme/nope/data?deviceId=x")
        let body = try plain.json()
        #expect(Set(body.keys) == ["statusCode", "error", "message", "timestamp", "path"])
        #expect(body["statusCode"] as? Int == 404)
        #expect(body["error"] as? String == "Not Found")
        #expect(body["path"] as? String == "/acme/nope/data")
        let stamp = try #require(body["timestamp"] as? String)
        #expect(stamp.count == 24 && stamp.hasSuffix("Z") && stamp.contains("."))
        let withId = try h.respond("GET", "/acme/nope/data", headers: ["x-request-id": "req-42"]).json()
        #expect(withId["requestId"] as? String == "req-42")
    }

    @Test func timestampIsIso8601WithMilliseconds() {
        #expect(ISO8601.string(fromEpochSeconds: 1_790_000_000.091) == "2026-09-21T14:13:20.091Z")
        #expect(ISO8601.string(fromEpochSeconds: 0) == "1970-01-01T00:00:00.000Z")
        #expect(ISO8601.string(fromEpochSeconds: 951_782_400.5) == "2000-02-29T00:00:00.500Z")
    }

    @Test(arguments: [
        (nil as String?, 401, "Missing Authorization header" as String?),
        ("Token abc" as String?, 401, "Invalid Authorization format"),
        ("Bearer", 401, "Invalid Authorization format"),
        ("Bearer opl_sdk_test_nobody", 401, "Invalid API key"),
        ("Bearer opl_sdk_test_acme_revoked", 401, "Invalid API key"),
        (
            "Bearer opl_srv_test_acme_server", 403,
            "API key tier 'SERVER' is not permitted on this endpoint (requires 'CLIENT')"
        ),
        ("Bearer opl_sdk_test_acme_rotated", 200, nil),
        ("bearer opl_sdk_test_acme_client", 200, nil),
    ])
    func authRows(header: String?, status: Int, message: String?) throws {
        var headers: [String: String] = [:]
        if let header { headers["Authorization"] = header }
        let response = try h.sdk("/sdk/session", ["deviceId": "device-0001"], key: nil, headers: headers)
        #expect(response.status == status)
        if let message { #expect(try response.message() == message) }
        if status >= 400 { #expect(try response.json()["details"] == nil) }
    }

    @Test func rotatedKeyStopsAfterTheGrace() throws {
        let time = VirtualTime()
        var fixtures = StagingFixtures.default
        fixtures.orgs[0].apiKeys.append(
            StagingAPIKey(key: "opl_sdk_test_acme_old", tier: .client, rotatedAt: time.now - 86_000))
        let h = BackendHarness(StagingConfiguration(fixtures: fixtures), time: time)
        #expect(try h.session("device-0001", key: "opl_sdk_test_acme_old").status == 200)
        time.advance(401)
        let late = try h.session("device-0001", key: "opl_sdk_test_acme_old")
        #expect(late.status == 401)
        #expect(try late.message() == "Invalid API key")
    }

    @Test func validationRows() throws {
        _ = try h.session("device-0001")
        let shortId = try h.sdk("/sdk/session", ["deviceId": "short"])
        #expect(shortId.status == 400)
        #expect(try shortId.message() == "deviceId must be longer than or equal to 8 characters")
        let details = try #require(try shortId.json()["details"] as? [[String: Any]])
        #expect(details.first?["field"] as? String == "deviceId")

        let emptyName = try h.event("device-0001", "")
        #expect(emptyName.status == 400)
        #expect(try emptyName.message() == "eventName must be longer than or equal to 1 characters")

        let big = try h.event("device-0001", properties: ["blob": String(repeating: "x", count: 10_240)])
        #expect(big.status == 400)
        #expect(try big.message() == "Validation failed")
        #expect((try big.json()["details"] as? [[String: Any]])?.first?["field"] as? String == "properties")

        let nested = try h.event("device-0001", properties: ["a": ["b": "c"]])
        #expect(nested.status == 400)
        #expect(try nested.message() == "Validation failed")
        let number = try h.event("device-0001", properties: ["n": 1])
        #expect(number.status == 400)
    }

    @Test func propertiesAtExactlyTheLimitAreAccepted() throws {
        _ = try h.session("device-0001")
        // {"blob":"…"} is 11 bytes of framing.
        let exact = try h.event("device-0001", properties: ["blob": String(repeating: "x", count: 10_240 - 11)])
        #expect(exact.status == 200)
        let over = try h.event("device-0001", properties: ["blob": String(repeating: "x", count: 10_240 - 10)])
        #expect(over.status == 400)
    }

    @Test func malformedJsonIs400WithEnvelope() throws {
        let response = try h.respond(
            "POST", "/sdk/events", headers: ["Authorization": "Bearer \(BackendHarness.clientKey)"],
            rawBody: Array("{not json".utf8))
        #expect(response.status == 400)
        let body = try response.json()
        #expect(body["error"] as? String == "Bad Request")
        #expect(body["details"] != nil)
        let array = try h.respond("POST", "/match", rawBody: Array("[1,2]".utf8))
        #expect(array.status == 400)
    }

    @Test func unknownDeviceIs404WithEmDash() throws {
        let identity = try h.sdk("/sdk/identity", ["deviceId": "device-0404", "externalId": "u"])
        #expect(identity.status == 404)
        #expect(try identity.message() == "Unknown deviceId device-0404 — call /sdk/session first")
        #expect(try h.event("device-0404").status == 404)
        #expect(try h.sdk("/sdk/identity/clear", ["deviceId": "device-0404"]).status == 404)
        _ = try h.match(iosMatchBody(deviceId: "device-0404"))
        #expect(try h.event("device-0404").status == 200)
    }

    @Test func unknownRoutesAnswer404Envelope() throws {
        let response = try h.respond("GET", "/no/such/route/here")
        #expect(response.status == 404)
        #expect(try response.message() == "Cannot GET /no/such/route/here")
        #expect(try h.respond("POST", "/match/", body: iosMatchBody()).status == 201)
        #expect(try h.respond("GET", "/acme/welcome/data/").status == 200)
        let wrongMethod = try h.respond("GET", "/match")
        #expect(wrongMethod.status == 404)
        #expect(try wrongMethod.message() == "Cannot GET /match")
    }

    @Test func ledgerRecordsAcceptedWritesOnly() throws {
        _ = try h.session("device-0001")
        _ = try h.sdk("/sdk/identity", ["deviceId": "device-0001", "externalId": "user-1"])
        _ = try h.sdk("/sdk/identity/clear", ["deviceId": "device-0001"])
        _ = try h.event("device-0001", "open", properties: ["opl_corr": "r:d:1"])
        _ = try h.event("device-0001", "")  // rejected
        _ = try h.event("device-9999")  // unknown device
        let ledger = h.backend.ledger()
        #expect(ledger.map(\.endpoint) == ["session", "identity", "identity_clear", "events"])
        #expect(ledger.map(\.sequence) == [1, 2, 3, 4])
        #expect(ledger.allSatisfy { $0.apiKeySuffix == "" && $0.deviceId == "device-0001" })
        #expect(ledger[1].externalId == "user-1")
        #expect(ledger[3].eventName == "open")
        #expect(ledger[3].properties == ["opl_corr": "r:d:1"])
        #expect(ledger[3].arrivedAt == h.time.now)
        let counters = h.backend.counters()
        #expect(counters.count("events", status: "200") == 1)
        #expect(counters.count("events", status: "400") == 1)
        #expect(counters.count("events", status: "404") == 1)
        #expect(counters.ledgerEntries == 4)
    }
}
