import Foundation
import Testing

/// docs/CONTRACT.md §2, decision 7 (seed 002's privacy surface): the `PrivacyInfo.xcprivacy` the
/// SDK ships, read as a property list, declares no tracking, no tracking domains, UserDefaults
/// accessed for reason CA92.1 only, and exactly the four collected data types.
struct PrivacyManifestTests {
    /// The manifest as shipped: the resource of the `OptoLink` target.
    static func manifest() throws -> [String: Any] {
        let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/OptoLink/Resources/PrivacyInfo.xcprivacy")
        let data = try Data(contentsOf: url)
        let plist = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        return try #require(plist as? [String: Any], "the manifest's root is a dictionary")
    }

    @Test func noTrackingAndNoTrackingDomains() throws {
        let manifest = try Self.manifest()
        #expect(manifest["NSPrivacyTracking"] as? Bool == false)
        let domains = try #require(manifest["NSPrivacyTrackingDomains"] as? [Any])
        #expect(domains.isEmpty)
    }

    @Test func userDefaultsIsTheOnlyAccessedAPIWithReasonCA92_1() throws {
        let manifest = try Self.manifest()
        let types = try #require(manifest["NSPrivacyAccessedAPITypes"] as? [[String: Any]])
        #expect(types.count == 1)
        #expect(types.first?["NSPrivacyAccessedAPIType"] as? String == "NSPrivacyAccessedAPICategoryUserDefaults")
        #expect(types.first?["NSPrivacyAccessedAPITypeReasons"] as? [String] == ["CA92.1"])
    }

    @Test func theFourCollectedDataTypesAreNotLinkedNorTracking() throws {
        let manifest = try Self.manifest()
        let collected = try #require(manifest["NSPrivacyCollectedDataTypes"] as? [[String: Any]])
        let kinds = collected.compactMap { $0["NSPrivacyCollectedDataType"] as? String }
        #expect(
            Set(kinds) == [
                "NSPrivacyCollectedDataTypeDeviceID", "NSPrivacyCollectedDataTypeCoarseLocation",
                "NSPrivacyCollectedDataTypeOtherUserContent", "NSPrivacyCollectedDataTypeProductInteraction",
            ])
        #expect(kinds.count == 4)
        for entry in collected {
            #expect(entry["NSPrivacyCollectedDataTypeTracking"] as? Bool == false)
            let purposes = try #require(entry["NSPrivacyCollectedDataTypePurposes"] as? [String])
            #expect(!purposes.isEmpty)
        }
    }
}
