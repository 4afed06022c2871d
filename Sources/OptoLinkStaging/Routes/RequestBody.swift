import Foundation

/// A parsed JSON object body with typed, validating accessors (class-validator style messages).
struct RequestBody {
    let object: [String: Any]
    var issues: [ValidationIssue] = []

    /// Parses `bytes`; an empty body is `{}`. `nil` when it is not JSON at all.
    static func parse(_ bytes: [UInt8]) -> Result<RequestBody, MalformedBody> {
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            return .success(RequestBody(object: [:]))
        }
        guard let value = try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed]) else {
            return .failure(.notJSON)
        }
        guard let object = value as? [String: Any] else { return .failure(.notObject) }
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
        guard let raw = object[field], !(raw is NSNull) else {
            if required {
                issues.append(
                    minLength > 0
                        ? Self.lengthIssue(field, minLength)
                        : ValidationIssue(field: field, message: "\(field) must be a string"))
            }
            return nil
        }
        guard let value = raw as? String, !Self.isNumberOrBool(raw) else {
            issues.append(ValidationIssue(field: field, message: "\(field) must be a string"))
            return nil
        }
        if value.count < minLength {
            issues.append(Self.lengthIssue(field, minLength))
            return nil
        }
        return value
    }

    /// A flat `string → string` map of at most `maxBytes` serialized bytes; absent is `[:]`.
    mutating func stringMap(_ field: String, maxBytes: Int) -> [String: String] {
        guard let raw = object[field], !(raw is NSNull) else { return [:] }
        guard let dictionary = raw as? [String: Any] else {
            issues.append(ValidationIssue(field: field, message: "\(field) must be an object"))
            return [:]
        }
        var map: [String: String] = [:]
        for (key, value) in dictionary {
            guard let text = value as? String, !Self.isNumberOrBool(value) else {
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

    /// On Linux an `NSNumber` never casts to `String`; on Darwin it can't either, but be explicit.
    private static func isNumberOrBool(_ value: Any) -> Bool { value is NSNumber }
}
