import Foundation

/// A coding key made from any string or index, to list the keys a JSON object really holds.
/// Shared with the soak tester's profile decoding (`package`), so both are strict the same way.
package struct AnyConfigurationKey: CodingKey, Hashable {
    package var stringValue: String
    package var intValue: Int?
    package init(stringValue: String) { self.stringValue = stringValue }
    package init(intValue: Int) {
        self.stringValue = "\(intValue)"
        self.intValue = intValue
    }
}

extension Decoder {
    /// The object's container after refusing every key `Keys` does not list, so a typo in a
    /// configuration (`"limts"`) fails instead of silently running with the defaults.
    ///
    /// - Throws: `DecodingError.dataCorrupted` at `<path>.<key>` with `unknown field (expected one of …)`.
    package func strictContainer<Keys: CodingKey & CaseIterable>(keyedBy _: Keys.Type) throws
        -> KeyedDecodingContainer<Keys>
    {
        let all = try container(keyedBy: AnyConfigurationKey.self)
        let known = Keys.allCases.map(\.stringValue)
        for key in all.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) where !known.contains(key.stringValue) {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: codingPath + [key],
                    debugDescription: "unknown field (expected one of \(known.joined(separator: ", ")))"))
        }
        return try container(keyedBy: Keys.self)
    }

    /// Decodes a string enum, refusing unknown values with the list of allowed ones.
    ///
    /// - Throws: `DecodingError.dataCorrupted` `unknown value "x" (expected one of …)`.
    func decodeCase<T: RawRepresentable & CaseIterable>(_: T.Type) throws -> T where T.RawValue == String {
        let container = try singleValueContainer()
        let text = try container.decode(String.self)
        guard let value = T(rawValue: text) else {
            let allowed = T.allCases.map(\.rawValue).joined(separator: ", ")
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "unknown value \"\(text)\" (expected one of \(allowed))")
        }
        return value
    }
}

extension DecodingError {
    /// One line `<field path>: <problem>` (`limits.events.limit: wrong type (expected a number)`),
    /// the same style as the soak profile's errors.
    var configurationDescription: String {
        func line(_ path: [any CodingKey], _ problem: String) -> String {
            var rendered = ""
            for key in path {
                if let index = key.intValue {
                    rendered += "[\(index)]"
                } else {
                    rendered += rendered.isEmpty ? key.stringValue : ".\(key.stringValue)"
                }
            }
            return rendered.isEmpty ? problem : "\(rendered): \(problem)"
        }
        switch self {
        case .keyNotFound(let key, let context): return line(context.codingPath + [key], "missing required field")
        case .typeMismatch(let type, let context):
            return line(context.codingPath, "wrong type (expected \(Self.jsonTypeName(type)))")
        case .valueNotFound(let type, let context):
            return line(context.codingPath, "must not be null (expected \(Self.jsonTypeName(type)))")
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                let detail = context.underlyingError.map { " (\(($0 as NSError).localizedDescription))" } ?? ""
                return "invalid JSON: \(context.debugDescription)\(detail)"
            }
            return line(context.codingPath, context.debugDescription)
        @unknown default: return "\(self)"
        }
    }

    private static func jsonTypeName(_ type: Any.Type) -> String {
        let name = String(describing: type)
        switch name {
        case "Int", "UInt64", "Int64", "Double", "UInt": return "a number"
        case "String": return "a string"
        case "Bool": return "true or false"
        default: return name.hasPrefix("Array") ? "an array" : "an object"
        }
    }
}
