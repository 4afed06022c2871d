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

/// Coding keys some of which are old names still read for compatibility, left out of the
/// "expected one of …" list of an unknown-field error.
package protocol DeprecatedAliasKey {
    var isDeprecatedAlias: Bool { get }
}

extension Decoder {
    /// The object's container after refusing every key `Keys` does not list, so a typo in a
    /// configuration (`"limts"`) fails instead of silently running with the defaults.
    ///
    /// - Throws: `DecodingError.dataCorrupted` at `<path>.<key>` with `unknown field (expected one of …)`.
    package func strictContainer<Keys: CodingKey & CaseIterable>(keyedBy _: Keys.Type) throws
        -> KeyedDecodingContainer<Keys>
    {
        if let first = try unknownKeyErrors(Keys.self).first { throw first }
        return try container(keyedBy: Keys.self)
    }

    /// One `dataCorrupted` error per key of this object that `Keys` does not list, sorted by key.
    ///
    /// - Throws: `DecodingError.typeMismatch` when the value is not an object.
    package func unknownKeyErrors<Keys: CodingKey & CaseIterable>(_: Keys.Type) throws -> [DecodingError] {
        let all = try container(keyedBy: AnyConfigurationKey.self)
        let known = Keys.allCases.map(\.stringValue)
        // Old names stay accepted but are not advertised.
        let listed = Keys.allCases.filter { !(($0 as? any DeprecatedAliasKey)?.isDeprecatedAlias ?? false) }
            .map(\.stringValue)
        return all.allKeys.sorted(by: { $0.stringValue < $1.stringValue }).filter { !known.contains($0.stringValue) }
            .map { key in
                DecodingError.dataCorrupted(
                    .init(
                        codingPath: codingPath + [key],
                        debugDescription: "unknown field (expected one of \(listed.joined(separator: ", ")))"))
            }
    }

    /// Decodes a string enum, refusing unknown values with the list of allowed ones.
    ///
    /// - Throws: `DecodingError.dataCorrupted` `unknown value "x" (expected one of …)`.
    package func decodeCase<T: RawRepresentable & CaseIterable>(_: T.Type) throws -> T where T.RawValue == String {
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

/// Renders a coding path as `journeys[2].steps[0].kind`.
package func renderCodingPath(_ path: [any CodingKey]) -> String {
    var rendered = ""
    for key in path {
        if let index = key.intValue {
            rendered += "[\(index)]"
        } else {
            rendered += rendered.isEmpty ? key.stringValue : ".\(key.stringValue)"
        }
    }
    return rendered
}

extension DecodingError {
    /// One line `<field path>: <problem>` (`limits.events.limit: wrong type (expected a number)`):
    /// the one rendering of decoding errors for emulator configurations, soak profiles, ledgers
    /// and reports.
    package var readableDescription: String {
        func line(_ path: [any CodingKey], _ problem: String) -> String {
            let rendered = renderCodingPath(path)
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
                return "not valid JSON: \(context.debugDescription)\(detail)"
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
        default: return name.hasPrefix("Array") ? "an array" : "an object"  // Dictionary and structs alike
        }
    }
}

/// The first key that appears twice in one JSON object of `data`, as one line
/// `<field path>: duplicate key (again at line L); each key may appear once per object`, or nil.
///
/// `JSONDecoder` keeps one of the two values silently (`"seed":3, "seed":4` runs with one seed), so
/// profiles and emulator configurations are scanned for duplicates first. Keys compare after JSON
/// unescaping (`"se\u0065d"` is `"seed"`). Assumes `data` is valid JSON (check that first).
package func duplicateKeyProblem(in data: Data) -> String? {
    duplicateKeyProblems(in: data).first
}

/// Every key given twice in one object of `data`, in order of appearance, as
/// `<path>.<key>: duplicate key (again at line L); …`; empty when there is none.
package func duplicateKeyProblems(in data: Data) -> [String] {
    struct Frame {
        var isObject: Bool
        package var keys: Set<String> = []
        var expectingKey: Bool
        package var key: String?
        package var index = 0
    }
    let bytes = [UInt8](data)
    var stack: [Frame] = []
    var problems: [String] = []
    var line = 1
    var i = 0
    func render(_ frames: [Frame], _ key: String) -> String {
        var path = ""
        for frame in frames.dropLast() {
            if frame.isObject {
                let part = frame.key ?? ""
                path += path.isEmpty ? part : ".\(part)"
            } else {
                path += "[\(frame.index)]"
            }
        }
        return path.isEmpty ? key : "\(path).\(key)"
    }
    while i < bytes.count {
        let byte = bytes[i]
        switch byte {
        case UInt8(ascii: "\n"):
            line += 1
        case UInt8(ascii: "\""):
            let start = i
            i += 1
            while i < bytes.count, bytes[i] != UInt8(ascii: "\"") {
                if bytes[i] == UInt8(ascii: "\\") { i += 1 }
                i += 1
            }
            guard var frame = stack.last, frame.isObject, frame.expectingKey else { break }
            let literal = Data(bytes[start...Swift.min(i, bytes.count - 1)])
            let key =
                (try? JSONDecoder().decode(String.self, from: literal)) ?? String(decoding: literal, as: UTF8.self)
            if frame.keys.contains(key) {
                let problem = "duplicate key (again at line \(line)); each key may appear once per object"
                problems.append("\(render(stack, key)): \(problem)")
            }
            frame.keys.insert(key)
            frame.key = key
            frame.expectingKey = false
            stack[stack.count - 1] = frame
        case UInt8(ascii: "{"):
            stack.append(Frame(isObject: true, expectingKey: true))
        case UInt8(ascii: "["):
            stack.append(Frame(isObject: false, expectingKey: false))
        case UInt8(ascii: "}"), UInt8(ascii: "]"):
            _ = stack.popLast()
        case UInt8(ascii: ","):
            if stack.last?.isObject == true {
                stack[stack.count - 1].expectingKey = true
            } else if !stack.isEmpty {
                stack[stack.count - 1].index += 1
            }
        default:
            break
        }
        i += 1
    }
    return problems
}
