import Foundation
import SoakRecords
import Testing

/// `opl_corr` read from an event body without `JSONSerialization`, and the fall-back to it for
/// any other shape.
@Suite("opl_corr scanner")
struct CorrelationScannerTests {
    /// What the recorder read before the fast path: the parsed JSON's `properties.opl_corr`.
    static func reference(_ body: Data) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
            let properties = object["properties"] as? [String: Any]
        else { return nil }
        return properties["opl_corr"] as? String
    }

    static let sdkShaped = [
        #"{"deviceId":"d-1","eventName":"bench","properties":{"k":"v","opl_corr":"run:d000001:7"}}"#,
        #"{"deviceId":"d-1","eventName":"bench","properties":{"k":"v"}}"#,
        #"{"deviceId":"d-1","eventName":"bench","properties":{}}"#,
        #"{"deviceId":"d-1","eventName":"bench"}"#,
        #"{"properties":{"x_opl_corr":"no","opl_corrx":"no"},"opl_corr":"top level"}"#,
        #"{"properties":{"k":"has \"opl_corr\":\"fake\""}}"#,
        #"{"properties":{"opl\/corr":"slash","opl_corr":"a\/b\\c\"d\n\te"}}"#,
        #" { "properties" : { "opl_corr" : "spaced" } } "#,
        #"{"properties":"opl_corr"}"#,
        #"{"properties":{"opl_corr":{"nested":"object"}}}"#,
        #"{"a":{"b":{"c":"d"}},"properties":{"opl_corr":"deep sibling"}}"#,
        // Keys with escapes are read without a copy of their own and never taken for one looked for.
        #"{"propert\"ies":{"opl_corr":"decoy"},"properties":{"opl_corr":"real"}}"#,
        #"{"properties":{"opl_corr\/":"decoy","opl\\corr":"decoy","opl_corr":"after escaped keys"}}"#,
        #"{"properties":{"k\n":"v\t","opl_corr":"x"},"tail\"key":{"opl_corr":"nested decoy"}}"#,
    ]

    static let otherShapes = [
        #"{"properties":{"opl_corr":"\u0041scii escape"}}"#,
        #"{"properties":{"opl_corr":7}}"#,
        #"{"properties":{"opl_corr":"ünï"}}"#,
        #"{"properties":{"opl_corr":"first","opl_corr":"second"}}"#,
        #"{"properties":{"opl_corr":"a"},"properties":{"opl_corr":"b"}}"#,
        #"{"properties":{"opl_corr":"x"},"list":[1,2]}"#,
        #"{"properties":{"opl_corr":"x"}} trailing"#,
        #"{"properties":{"opl_corr":"x"},}"#,
        #"{"properties":{"opl_corr":"unterminated}}"#,
        "{\"properties\":{\"opl_corr\":\"raw\ttab\"}}",
        #"["not","an","object"]"#,
        "",
        #"{"properties":{"opl_corr":null}}"#,
        #"{"a\q":"bad escape in a key","properties":{"opl_corr":"x"}}"#,
        "{\"a\u{01}b\":\"raw control byte in a key\",\"properties\":{\"opl_corr\":\"x\"}}",
        String(repeating: #"{"a":"#, count: 40) + #""x""# + String(repeating: "}", count: 40),
    ]

    @Test func theScannerReadsTheSDKsBodiesAsJSONSerializationDoes() {
        for text in Self.sdkShaped {
            let body = Data(text.utf8)
            #expect(CorrelationScanner.scan(body) == .found(Self.reference(body)), "\(text)")
            #expect(AttemptClassification.correlationId(endpoint: .events, body: body) == Self.reference(body))
        }
        #expect(
            CorrelationScanner.scan(Data(Self.sdkShaped[0].utf8)) == .found("run:d000001:7"))
    }

    @Test func anyOtherShapeFallsBackToJSONSerialization() {
        for text in Self.otherShapes {
            let body = Data(text.utf8)
            #expect(CorrelationScanner.scan(body) == .unsure, "\(text)")
            #expect(AttemptClassification.correlationId(endpoint: .events, body: body) == Self.reference(body))
        }
        #expect(
            AttemptClassification.correlationId(endpoint: .events, body: Data(Self.otherShapes[0].utf8))
                == "Ascii escape")
        #expect(AttemptClassification.correlationId(endpoint: .match, body: Data(Self.sdkShaped[0].utf8)) == nil)
    }
}
