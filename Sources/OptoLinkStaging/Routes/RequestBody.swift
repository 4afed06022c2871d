/// A parsed JSON object body with typed, validating accessors (class-validator style messages).
struct RequestBody {
    let object: [String: RequestBodyJSON]
    var issues: [ValidationIssue] = []

    /// Parses `bytes`; an empty (or all-whitespace) body is `{}`.
    static func parse(_ bytes: [UInt8]) -> Result<RequestBody, MalformedBody> {
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            return .success(RequestBody(object: [:]))
        }
        guard let value = RequestBodyJSON.parse(bytes) else { return .failure(.notJSON) }
        guard case .object(let object) = value else { return .failure(.notObject) }
        return .success(RequestBody(object: object))
    }

    enum MalformedBody: Error {
        case notJSON, notObject

        var issue: ValidationIssue {
            switch self {
            case .notJSON: ValidationIssue(field: "body", message: "body must be valid JSON")
            case .notObject: ValidationIssue(field: "body", message: "body must be a JSON object")
            }
        }
    }

    /// A string field; records an issue when present but not a string, or (when `required`) absent.
    mutating func string(_ field: String, required: Bool = false, minLength: Int = 0) -> String? {
        switch object[field] ?? .null {
        case .null:
            if required {
                issues.append(
                    minLength > 0
                        ? Self.lengthIssue(field, minLength)
                        : ValidationIssue(field: field, message: "\(field) must be a string"))
            }
            return nil
        case .string(let value):
            if minLength > 0 && value.count < minLength {
                issues.append(Self.lengthIssue(field, minLength))
                return nil
            }
            return value
        default:
            issues.append(ValidationIssue(field: field, message: "\(field) must be a string"))
            return nil
        }
    }

    /// A flat `string → string` map of at most `maxBytes` serialized bytes; absent is `[:]`.
    mutating func stringMap(_ field: String, maxBytes: Int) -> [String: String] {
        let members: [String: RequestBodyJSON]
        switch object[field] ?? .null {
        case .null: return [:]
        case .object(let object): members = object
        default:
            issues.append(ValidationIssue(field: field, message: "\(field) must be an object"))
            return [:]
        }
        var map: [String: String] = [:]
        map.reserveCapacity(members.count)
        for (key, value) in members {
            guard case .string(let text) = value else {
                issues.append(ValidationIssue(field: field, message: "\(field) must be a flat map of string values"))
                return [:]
            }
            map[key] = text
        }
        let size = JSONWriter.serializedSize(of: map)
        if size > maxBytes {
            issues.append(
                ValidationIssue(
                    field: field, message: "\(field) must not exceed \(maxBytes) bytes when serialized (got \(size))"))
            return [:]
        }
        return map
    }

    private static func lengthIssue(_ field: String, _ minLength: Int) -> ValidationIssue {
        ValidationIssue(
            field: field, message: "\(field) must be longer than or equal to \(minLength) characters", isLength: true)
    }
}
