import Foundation
import OptoLinkHTTP
import OptoLinkStaging
import Testing

/// docs/CONTRACT.md §4 "Clicks" and the ladder: clipboard → exact → scored → IP fuzzy → miss.
@Suite struct MatchLadderTests {
    let h = BackendHarness()

    @Test func clickPageCarriesTheLinkUrlWithToken() throws {
        let response = try h.respond(
            "GET", "/acme/welcome", headers: ["User-Agent": BackendHarness.safariUA, "Host": "links.acme.test"])
        #expect(response.status == 200)
        #expect(response.headers["Content-Type"]?.hasPrefix("text/html") == true)
        let html = response.text
        #expect(html.contains(#"<input id="cbt""#))
        let pattern = #/value="https://links\.acme\.test/acme/welcome\?opl_click=(opl_[0-9A-Za-z]{24})"/#
        #expect(html.firstMatch(of: pattern) != nil)
        #expect(try h.respond("GET", "/acme/nope").status == 404)
        #expect(try h.respond("GET", "/acme/expired").status == 410)
    }

    @Test func hostileHostHeaderIsEscapedInThePage() throws {
        let response = try h.respond("GET", "/acme/welcome", headers: ["Host": #"x"><script>alert(1)</script>"#])
        #expect(!response.text.contains("<script>alert"))
        #expect(response.text.contains("x&quot;&gt;&lt;script&gt;"))
    }

    @Test func chromeClickWithTimezoneMatchesExactOnlyWithTheSameTimezone() throws {
        let chrome = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 Chrome/126.0 Mobile Safari/537.36"
        _ = try h.respond(
            "GET", "/acme/welcome?tz=Europe%2FBerlin", headers: ["User-Agent": chrome, "Accept-Language": "de-DE"])
        let body: [String: Any] = [
            "platform": "Android", "osVersion": "14", "language": "de-DE", "timezone": "Europe/Berlin",
            "deviceId": "device-0001",
        ]
        #expect(try h.match(body).json()["matchMethod"] as? String == "FINGERPRINT_EXACT")
    }

    @Test func clipboardTokenMatchesExactlyAndIsConsumed() throws {
        let token = try h.click("acme", "promo")
        var other = h
        other.peer = "10.9.9.9"
        let hit = try other.match(iosMatchBody(token: token))
        #expect(hit.status == 201)
        #expect(
            hit.text
                == #"{"matched":true,"matchMethod":"CLIPBOARD","matchConfidence":"exact","linkId":"lnk_promo","path":"/promo/summer","params":{"code":"SUMMER","ref":"mail"}}"#
        )
        let again = try other.match(iosMatchBody(token: token))
        #expect(again.text == #"{"matched":false,"matchMethod":"NONE"}"#)
    }

    @Test func clipboardUrlFormIsAccepted() throws {
        let token = try h.click()
        let body = iosMatchBody(token: "https://links.acme.test/acme/welcome?opl_click=\(token)")
        #expect(try h.match(body).json()["matchMethod"] as? String == "CLIPBOARD")
    }

    @Test func sameFingerprintWithoutTimezoneHitsExact() throws {
        _ = try h.click()
        let hit = try h.match(iosMatchBody()).json()
        #expect(hit["matchMethod"] as? String == "FINGERPRINT_EXACT")
        #expect(hit["matchConfidence"] as? String == "high")
        #expect(hit["matchScore"] == nil)
        #expect(hit["linkId"] as? String == "lnk_welcome")
        // Consumed: the second device from the same IP misses (no other click).
        #expect(try h.match(iosMatchBody()).json()["matched"] as? Bool == false)
    }

    @Test func sendingATimezoneForfeitsExactAndFallsToScored() throws {
        _ = try h.click()
        let hit = try h.match(iosMatchBody(timezone: "Europe/Berlin"))
        let body = try hit.json()
        #expect(body["matchMethod"] as? String == "FINGERPRINT_SCORED")
        #expect(body["matchConfidence"] as? String == "medium")
        #expect(body["matchScore"] as? Int == 95)
        #expect(
            Array(body.keys).sorted() == [
                "linkId", "matchConfidence", "matchMethod", "matchScore", "matched", "params", "path",
            ])
    }

    @Test func differentOsVersionScoresBelowExact() throws {
        _ = try h.click()
        var body = iosMatchBody()
        body["osVersion"] = "17.4"
        let hit = try h.match(body).json()
        #expect(hit["matchMethod"] as? String == "FINGERPRINT_SCORED")
        #expect(hit["matchScore"] as? Int == 80)
    }

    @Test func sameIpOtherPlatformIsIpFuzzyWithinItsWindow() throws {
        _ = try h.click()
        let android: [String: Any] = [
            "platform": "Android", "osVersion": "14", "language": "de-DE", "deviceId": "device-0002",
        ]
        let hit = try h.match(android).json()
        #expect(hit["matchMethod"] as? String == "IP_FUZZY")
        #expect(hit["matchConfidence"] as? String == "low")

        _ = try h.click()
        h.time.advance(3_601)
        #expect(try h.match(android).json()["matched"] as? Bool == false)
    }

    @Test func otherIpMisses() throws {
        _ = try h.click()
        var other = h
        other.peer = "192.0.2.7"
        #expect(try other.match(iosMatchBody()).text == #"{"matched":false,"matchMethod":"NONE"}"#)
        h.time.advance(86_401)
        #expect(try h.match(iosMatchBody()).json()["matched"] as? Bool == false)
    }

    @Test func matchWithoutDeviceIdIs400() throws {
        var body = iosMatchBody()
        body.removeValue(forKey: "deviceId")
        let response = try h.match(body)
        #expect(response.status == 400)
        #expect(try response.message() == "deviceId must be longer than or equal to 8 characters")
    }

    @Test(arguments: [
        ("Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) Safari/604.1", "iOS", "18.1", "iPhone"),
        ("Mozilla/5.0 (iPad; CPU OS 17_4_1 like Mac OS X) Safari/604.1", "iOS", "17.4", "iPad"),
        ("Mozilla/5.0 (iPhone; CPU iPhone OS 18 like Mac OS X)", "iOS", "18.0", "iPhone"),
        ("Mozilla/5.0 (Linux; Android 14; Pixel 8) Chrome/126.0", "Android", "14.0", ""),
        ("curl/8.0", "Other", "", ""),
    ])
    func userAgentParsing(ua: String, platform: String, os: String, model: String) {
        let s = BrowserSignals(userAgent: ua, acceptLanguage: "en-GB;q=0.9, en")
        #expect(s.platform == platform)
        #expect(s.osVersion == os)
        #expect(s.deviceModel == model)
        #expect(s.language == "en-GB")
    }
}
