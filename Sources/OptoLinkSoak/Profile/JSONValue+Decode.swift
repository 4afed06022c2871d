import Foundation
import SoakSupport

extension JSONValue {
    /// Decodes this value as `T` (round-trips through JSON).
    /// - Throws: `SoakProfileError` naming `prefix` plus the inner field path.
    package func decode<T: Decodable>(_ type: T.Type, fieldPrefix prefix: String) throws -> T {
        let data = try JSONEncoder().encode(self)
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch let error as DecodingError {
            let inner = error.readableDescription
            throw SoakProfileError(
                message: inner.hasPrefix("not valid JSON") ? "\(prefix): \(inner)" : "\(prefix).\(inner)")
        }
    }
}
