import Foundation

/// The profiles the repository ships (`Profiles/`), found from this file's place in
/// `Tests/OptoLinkSoakTests/Support/`, so a test reads them wherever `swift test` runs from.
enum ShippedProfiles {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Profiles")

    /// The shipped profile at `path` under `Profiles/`.
    static func url(_ path: String) -> URL { directory.appendingPathComponent(path) }
}
