import Foundation

/// A coding key built from any string or index, used to list the keys an object really has.
struct AnyCodingKey: CodingKey, Hashable {
    var stringValue: String
    var intValue: Int?
    init(stringValue: String) { self.stringValue = stringValue }
    init(intValue: Int) {
        self.stringValue = "\(intValue)"
        self.intValue = intValue
    }
}

extension Decoder {
    /// Throws a `dataCorrupted` error naming the first key of this object not listed in `Keys`,
    /// so a typo in a profile (`"rate"` for `"target"`) fails instead of being ignored.
    func rejectUnknownKeys<Keys: CodingKey & CaseIterable>(_: Keys.Type) throws {
        let container = try container(keyedBy: AnyCodingKey.self)
        let known = Keys.allCases.map(\.stringValue)
        for key in container.allKeys.sorted(by: { $0.stringValue < $1.stringValue })
        where !known.contains(key.stringValue) {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: codingPath + [key],
                    debugDescription: "unknown field (expected one of \(known.joined(separator: ", ")))"
                )
            )
        }
    }
}

extension KeyedDecodingContainer {
    /// Decodes an optional value and checks it with `valid`, throwing a message naming the field.
    func decodeChecked<T: Decodable>(
        _ type: T.Type, forKey key: Key, default fallback: T, _ problem: String, _ valid: (T) -> Bool
    ) throws -> T {
        let value = try decodeIfPresent(type, forKey: key) ?? fallback
        guard valid(value) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: problem)
        }
        return value
    }

    /// Like ``decodeChecked(_:forKey:default:_:_:)`` for a required field.
    func decodeRequired<T: Decodable>(_ type: T.Type, forKey key: Key, _ problem: String, _ valid: (T) -> Bool) throws
        -> T
    {
        let value = try decode(type, forKey: key)
        guard valid(value) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: problem)
        }
        return value
    }
}

/// Renders a coding path as `journeys[2].steps[0].kind`.
func renderCodingPath(_ path: [any CodingKey]) -> String {
    var out = ""
    for key in path {
        if let index = key.intValue {
            out += "[\(index)]"
        } else {
            out += out.isEmpty ? key.stringValue : ".\(key.stringValue)"
        }
    }
    return out
}

/// Turns a `DecodingError` into one line: `<field path>: <problem>`.
func describeDecodingError(_ error: DecodingError) -> String {
    func line(_ path: [any CodingKey], _ problem: String) -> String {
        let rendered = renderCodingPath(path)
        return rendered.isEmpty ? problem : "\(rendered): \(problem)"
    }
    switch error {
    case .keyNotFound(let key, let context):
        return line(context.codingPath + [key], "missing required field")
    case .typeMismatch(let type, let context):
        return line(context.codingPath, "wrong type (expected \(jsonTypeName(type)))")
    case .valueNotFound(let type, let context):
        return line(context.codingPath, "must not be null (expected \(jsonTypeName(type)))")
    case .dataCorrupted(let context):
        if context.codingPath.isEmpty {
            let detail = context.underlyingError.map { " (\(($0 as NSError).localizedDescription))" } ?? ""
            return "not valid JSON: \(context.debugDescription)\(detail)"
        }
        return line(context.codingPath, context.debugDescription)
    @unknown default:
        return "\(error)"
    }
}

private func jsonTypeName(_ type: Any.Type) -> String {
    let name = String(describing: type)
    switch name {
    case "Int", "UInt64", "Int64", "Double", "UInt": return "a number"
    case "String": return "a string"
    case "Bool": return "true or false"
    default:
        if name.hasPrefix("Array") { return "an array" }
        if name.hasPrefix("Dictionary") { return "an object" }
        return "an object"
    }
}
