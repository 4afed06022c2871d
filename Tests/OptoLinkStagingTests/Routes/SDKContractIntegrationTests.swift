import Foundation
import OptoLink
import OptoLinkStaging
import OptoLinkTestSupport
import Testing

/// Every endpoint and error row through the SDK's real URLSession transport over real sockets.
@Suite(.timeLimit(.minutes(1))) struct SDKContractIntegrationTests {
    @Test func deferredClipboardMatchEmitsAndSkipsSession() async throws {
        try await withEmulator { e in
            let payload = try await e.click("promo")
            #expect(payload.contains("/acme/promo?opl_click=opl_"))
            let device = e.device(pasteboard: payload)
            await device.sdk.start()
            let link = try #require(await device.sdk.firstLink())
            #expect(link.matchMethod == .clipboard)
            #expect(link.confidence == .exact)
            #expect(link.linkId == "lnk_promo")
            #expect(link.path == "/promo/summer")
            #expect(link.params == ["code": "SUMMER", "ref": "mail"])
            #expect(link.isDeferred)
            await device.sdk.waitForBackgroundWork()
            #expect(device.pasteboard.string() == nil || device.pasteboard.string() == "")
            #expect(e.server.ledger().isEmpty)  // a hit sends no session
            #expect(e.server.counters().count("match", status: "201") == 1)
        }
    }

    @Test func fingerprintExactThenScoredForAnOlderOs() async throws {
        try await withEmulator { e in
            _ = try await e.click()
            let exact = try await e.device().sdk.resolveDeferredLink()
            #expect(exact?.matchMethod == .fingerprintExact)
            #expect(exact?.confidence == .high)
            #expect(exact?.linkId == "lnk_welcome")

            _ = try await e.click("promo")
            let scored = try await e.device(osVersion: "17.4").sdk.resolveDeferredLink()
            #expect(scored?.matchMethod == .fingerprintScored)
            #expect(scored?.confidence == .medium)
            #expect(scored?.score == 80)
            #expect(try await e.device().sdk.resolveDeferredLink() == nil)
        }
    }

    @Test func missSendsOneSessionThatLandsInTheLedger() async throws {
        try await withEmulator { e in
            let device = e.device()
            await device.sdk.start()
            await device.sdk.waitForBackgroundWork()
            let ledger = e.server.ledger()
            #expect(ledger.map(\.endpoint) == ["session"])
            #expect(ledger.first?.deviceId == device.sdk.deviceId)
            // The fixture key is too short behind its prefix for the redaction to show its end.
            #expect(ledger.first?.apiKeySuffix == "")
        }
    }

    @Test func universalLinkResolvesThroughDataOrFallsBackRaw() async throws {
        try await withEmulator { e in
            let device = e.device()
            await device.sdk.start()
            let stream = device.sdk.links
            device.sdk.handle(url: try #require(URL(string: "https://links.acme.test/acme/promo")))
            var iterator = stream.makeAsyncIterator()
            let direct = try #require(await iterator.next())
            #expect(direct.matchMethod == .direct)
            #expect(direct.linkId == "lnk_promo")
            #expect(direct.isDeferred == false)
            device.sdk.handle(url: try #require(URL(string: "https://links.acme.test/acme/expired?x=1")))
            let raw = try #require(await iterator.next())
            #expect(raw.linkId == nil)
            #expect(raw.path == "/acme/expired")
            #expect(device.attempts.of(.data).map(\.status) == [200, 410])
        }
    }

    @Test func telemetryWritesLandInTheLedgerInOrder() async throws {
        try await withEmulator { e in
            let device = e.device()
            await device.sdk.start()
            await device.sdk.waitForBackgroundWork()
            try await device.sdk.setIdentity(externalId: "user-4711")
            try await device.sdk.trackEvent(name: "purchase", properties: ["opl_corr": "run:1:1", "sku": "A"])
            try await device.sdk.clearIdentity()
            let ledger = e.server.ledger()
            #expect(ledger.map(\.endpoint) == ["session", "identity", "events", "identity_clear"])
            #expect(ledger[1].externalId == "user-4711")
            #expect(ledger[2].properties == ["opl_corr": "run:1:1", "sku": "A"])
            #expect(Set(ledger.map(\.deviceId)) == [device.sdk.deviceId])
        }
    }

    @Test func errorRowsSurfaceAsApiErrorsWithoutRetry() async throws {
        try await withEmulator { e in
            let fresh = e.device()  // never started: unknown to the backend
            let unknown = try #require(await apiError { try await fresh.sdk.trackEvent(name: "x") })
            #expect(unknown.status == 404)
            #expect(unknown.message == "Unknown deviceId \(fresh.sdk.deviceId) — call /sdk/session first")

            let device = e.device()
            await device.sdk.start()
            await device.sdk.waitForBackgroundWork()
            let empty = try #require(await apiError { try await device.sdk.trackEvent(name: "") })
            #expect(empty.status == 400)
            #expect(empty.errorDescription == "eventName must be longer than or equal to 1 characters")
            #expect(empty.details?.first?.field == "eventName")
            let big = try #require(
                await apiError {
                    try await device.sdk.trackEvent(
                        name: "big", properties: ["b": String(repeating: "x", count: 10_240)])
                })
            #expect(big.status == 400)
            #expect(big.message == "Validation failed")
            #expect(big.details?.isEmpty == false)
            #expect(device.attempts.of(.events).map(\.status) == [400, 400])

            for (key, status, message) in [
                (
                    "opl_srv_test_acme_server", 403,
                    "API key tier 'SERVER' is not permitted on this endpoint (requires 'CLIENT')"
                ),
                ("opl_sdk_test_acme_revoked", 401, "Invalid API key"),
                ("opl_sdk_test_unknown", 401, "Invalid API key"),
            ] {
                let other = e.device(apiKey: key)
                let error = try #require(await apiError { try await other.sdk.setIdentity(externalId: "u") })
                #expect(error.status == status)
                #expect(error.message == message)
                #expect(error.requestId == nil)
                #expect(other.attempts.all.count == 1)
            }
            let rotated = e.device(apiKey: "opl_sdk_test_acme_rotated")
            await rotated.sdk.start()
            await rotated.sdk.waitForBackgroundWork()
            try await rotated.sdk.trackEvent(name: "still-valid")
        }
    }

    @Test func aasaAndAdminRoutesOverTheSocket() async throws {
        try await withEmulator { e in
            let aasa = try await e.fetch("GET", "/.well-known/apple-app-site-association")
            #expect(aasa.status == 200)
            #expect(aasa.body.contains(#""appIDs":["TEAM123456.com.example.acme"]"#))
            let counters = try await e.fetch("GET", "/__admin/counters")
            #expect(counters.status == 200)
            let decoded = try JSONDecoder().decode(StagingCounters.self, from: Data(counters.body.utf8))
            #expect(decoded.count("aasa", status: "200") == 1)
            let unknown = try await e.fetch("DELETE", "/sdk/events")
            #expect(unknown.status == 404)
            #expect(unknown.body.contains(#""message":"Cannot DELETE /sdk/events""#))
        }
    }
}
