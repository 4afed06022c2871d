import Foundation
import OptoLink
import Testing

/// The SDK's own body writer must produce exactly what `JSONSerialization` with sorted keys
/// produces for every shape it accepts, and decline every shape it does not handle.
@Suite(.timeLimit(.minutes(1)))
struct JSONBodyTests {
    static func reference(_ object: [String: Any]) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    static var bodies: [[String: Any]] {
        [
            [:],
            ["deviceId": "d-1", "eventName": "purchase", "properties": ["opl_corr": "run:dev-1:3", "k": "v"]],
            ["deviceId": "x", "eventName": "e", "properties": [String: String]()],
            ["_x": "1", "A_": "2", "a_b": "3", "aab": "4", "ab": "5", "Zz": "6", "z_": "7", "Z": "8", "abd": "9"],
            ["s": #"slash/ quote" back\ é ünïcødé 😀 \#u{7f} \#u{2028}"#, "t": ""],
            ["outer": ["inner": ["leaf": "v"] as [String: Any], "b": "c"] as [String: Any]],
            [
                "platform": "iOS", "osVersion": "18.1", "deviceModel": "iPhone16,2", "language": "en-GB",
                "deviceId": "b3b1c7de-0000-4000-8000-00000000be0c", "clipboardToken": "opl_abc/def",
            ],
            // Strings copied whole (nothing to escape) beside strings escaped byte by byte, a long
            // one past the small-string size, and a bridged `NSString` (no contiguous UTF-8 of its own).
            [
                "clean": String(repeating: "abcdefghij", count: 40), "esc": "a\\b\"c/d", "mixed": "plain",
                "bridged": NSString(string: "ns/string é") as String, "e": "",
            ],
        ]
    }

    @Test(arguments: 0..<8)
    func matchesJSONSerialization(index: Int) throws {
        let body = Self.bodies[index]
        let data = try #require(OptoLinkJSONBody.encode(body))
        #expect(String(decoding: data, as: UTF8.self) == (try Self.reference(body)))
    }

    static var declined: [[String: Any]] {
        [
            ["a1": "digits sort numerically"],
            ["key": "x", "KEY": "case-insensitive tie"],
            ["n": 1],
            ["b": true],
            ["control": "line\nbreak"],
            ["list": ["a"]],
            ["": "empty key"],
            ["dash-key": "v"],
        ]
    }

    @Test(arguments: 0..<8)
    func declinesOtherShapes(index: Int) {
        #expect(OptoLinkJSONBody.encode(Self.declined[index]) == nil)
    }

    @Test func argumentRangesCoverEveryFixture() {
        #expect(Self.bodies.count == 8)
        #expect(Self.declined.count == 8)
    }

    /// Objects of 0 to 40 random keys, in every order the hash table gives them: the writer's
    /// sort agrees with `JSONSerialization`'s, nested objects included, and a pair of keys equal
    /// ignoring case (at any depth) is declined.
    @Test func randomKeySetsSortAsJSONSerializationDoes() throws {
        var state: UInt64 = 0x5EED_0B0D
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
        func keys(_ count: Int) -> [String] {
            var seen = Set<String>()
            var out: [String] = []
            while out.count < count {
                let key = String((0..<(1 + next(6))).map { _ in alphabet[next(alphabet.count)] })
                if seen.insert(key.lowercased()).inserted { out.append(key) }
            }
            return out
        }
        for round in 0..<300 {
            var object: [String: Any] = [:]
            for key in keys(next(41)) { object[key] = "v\(next(1000))" }
            if round % 3 == 0 {
                var inner: [String: String] = [:]
                for key in keys(next(12)) { inner[key] = "w/\(round)" }
                object["nested_\(round % 7 == 0 ? "x" : "y")"] = inner
            }
            let data = try #require(OptoLinkJSONBody.encode(object), "round \(round)")
            #expect(String(decoding: data, as: UTF8.self) == (try Self.reference(object)), "round \(round)")
            if let some = object.keys.first(where: { $0.lowercased() != $0.uppercased() }) {
                var tied = object
                tied[some.uppercased() == some ? some.lowercased() : some.uppercased()] = "tie"
                #expect(OptoLinkJSONBody.encode(tied) == nil, "round \(round): \(some)")
                #expect(OptoLinkJSONBody.encode(["outer": tied]) == nil, "round \(round), nested")
            }
        }
    }

    /// The events body written directly is the generic writer's (and so `JSONSerialization`'s)
    /// output for the same object, and is declined exactly when that one is.
    @Test func theEventBodyIsTheGenericBodyOfTheSameObject() throws {
        let cases: [(String, String, [String: String])] = [
            ("b3b1c7de-0000-4000-8000-00000000be0c", "purchase", ["opl_corr": "run:d000001:7", "k": "v"]),
            ("d", "", [:]),
            ("d/1", #"quote " back\ é 😀"#, ["Zeta": "1", "alpha": "2", "_u": "3", "beta": "4"]),
            ("d", "tick", ["key": "x", "KEY": "tie ignoring case"]),
            ("d", "line\nbreak", ["k": "v"]),
            ("d", "e", ["bad-key": "v"]),
            ("d\u{1}", "e", [:]),
        ]
        for (deviceId, eventName, properties) in cases {
            let object: [String: Any] = ["deviceId": deviceId, "eventName": eventName, "properties": properties]
            let direct = OptoLinkJSONBody.encodeEvent(deviceId: deviceId, eventName: eventName, properties: properties)
            #expect(direct == OptoLinkJSONBody.encode(object), "\(eventName)")
            if let direct {
                #expect(String(decoding: direct, as: UTF8.self) == (try Self.reference(object)))
            }
        }
    }
}
