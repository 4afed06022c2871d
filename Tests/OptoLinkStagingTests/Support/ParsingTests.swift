import Foundation
import OptoLinkStaging
import Testing

/// The hand-written request-body parser and header/query helpers on the hot path.
@Suite struct ParsingTests {
    @Test(arguments: [
        (#"{"a":"b","n":-1.5e2,"t":true,"f":false,"z":null,"l":[1,"x",{}]}"#, true),
        (#"  {"esc":"q\"b\\s\/n\n\u00e9\ud83d\ude00"}  "#, true),
        ("[]", true), ("\"s\"", true), ("0", true), ("-0.5", true),
        ("{", false), (#"{"a":}"#, false), (#"{"a":"b",}"#, false), ("[1,]", false), ("01", false), ("1.", false),
        ("tru", false), (#"{"a":"b"} x"#, false), (#"{"a":"\x"}"#, false), ("\"\u{01}\"", false),
        (#""\ud800""#, false), (#""\udc00x""#, false), ("{'a':1}", false), ("NaN", false),
    ])
    func parsesExactlyValidJSON(text: String, valid: Bool) {
        #expect((RequestBodyJSON.parse(Array(text.utf8)) != nil) == valid, "\(text)")
        // Linux Foundation tolerates trailing commas; Express's JSON.parse (the reference) does not.
        guard !text.contains(",}") && !text.contains(",]") else { return }
        let foundation = (try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])) != nil
        #expect(foundation == valid, "Foundation disagrees on \(text)")
    }

    @Test func decodesEscapesAndUnicode() throws {
        let value = RequestBodyJSON.parse(Array(#"{"k":"q\"b\\s\/n\n\u00e9\ud83d\ude00","d":{"x":"y"}}"#.utf8))
        guard case .object(let object)? = value else {
            Issue.record("not an object")
            return
        }
        #expect(object["k"] == .string("q\"b\\s/n\né😀"))
        #expect(object["d"] == .object(["x": .string("y")]))
        #expect(RequestBodyJSON.parse(Array("{\"a\":\"é\"}".utf8)) == .object(["a": .string("é")]))
    }

    @Test func refusesInvalidUtf8AndDeepNesting() {
        #expect(RequestBodyJSON.parse([0x22, 0xFF, 0x22]) == nil)
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        #expect(RequestBodyJSON.parse(Array(deep.utf8)) == nil)
        let ok = String(repeating: "[", count: 60) + String(repeating: "]", count: 60)
        #expect(RequestBodyJSON.parse(Array(ok.utf8)) != nil)
    }

    @Test(arguments: [
        ("Bearer opl_x", "opl_x" as String?), ("bearer opl_x", "opl_x"), ("BEARER   opl_x", "opl_x"),
        ("Bearer", nil), ("Bearer ", nil), ("Bearer a b", nil), ("Token opl_x", nil), ("Bearerx opl", nil), ("", nil),
    ])
    func bearerTokens(header: String, token: String?) {
        #expect(StagingBackend.bearerToken(header) == token)
    }

    @Test func queryValues() {
        #expect(PercentDecoding.queryValue("deviceId=abc&x=1", "deviceId") == "abc")
        #expect(PercentDecoding.queryValue("x=1&deviceId=a%20b+c", "deviceId") == "a b c")
        #expect(PercentDecoding.queryValue("device%49d=z", "deviceId") == "z")
        #expect(PercentDecoding.queryValue("deviceId", "deviceId") == "")
        #expect(PercentDecoding.queryValue("deviceIdx=1&&", "deviceId") == nil)
        #expect(PercentDecoding.queryValue("deviceId=%zz", "deviceId") == nil)
        #expect(PercentDecoding.queryValue(nil, "deviceId") == nil)
    }
}
