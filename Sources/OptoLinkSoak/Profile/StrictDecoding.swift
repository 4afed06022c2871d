import Foundation
import OptoLinkStaging

/// A coding key built from any string or index (the emulator's, so profiles and emulator
/// configurations are strict the same way).
typealias AnyCodingKey = AnyConfigurationKey

extension Decoder {
    /// Throws a `dataCorrupted` error naming the first key of this object not listed in `Keys`,
    /// so a typo in a profile (`"rate"` for `"target"`) fails instead of being ignored.
    func rejectUnknownKeys<Keys: CodingKey & CaseIterable>(_: Keys.Type) throws {
        _ = try strictContainer(keyedBy: Keys.self)
    }
}

extension KeyedDecodingContainer {
    /// Decodes an optional value and checks it with `valid`, throwing a message naming the field.
    func decodeChecked<T: Decodable>(
        _ type: T.Type, forKey key: Key, default fallback: T, _ problem: String, _ valid: (T) -> Bool
    ) throws -> T {
        let value = try decodeFieldIfPresent(type, forKey: key) ?? fallback
        guard valid(value) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: problem)
        }
        return value
    }

    /// Like ``decodeChecked(_:forKey:default:_:_:)`` for a required field.
    func decodeRequired<T: Decodable>(_ type: T.Type, forKey key: Key, _ problem: String, _ valid: (T) -> Bool) throws
        -> T
    {
        let value = try decodeField(type, forKey: key)
        guard valid(value) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: problem)
        }
        return value
    }
}

extension KeyedDecodingContainer {
    /// `decode(_:forKey:)`, but a number of the wrong kind (`20.5` for a whole number, `-1` for
    /// an unsigned one) becomes a `dataCorrupted` error naming this field. Foundation's decoder
    /// throws an internal error there that the top level reports as "not valid JSON" with no path.
    func decodeField<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try naming(key) { try decode(type, forKey: key) }
    }

    /// `decodeIfPresent(_:forKey:)` with the same field naming as ``decodeField(_:forKey:)``.
    func decodeFieldIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        try naming(key) { try decodeIfPresent(type, forKey: key) }
    }

    private func naming<T>(_ key: Key, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as DecodingError {
            throw error
        } catch {
            throw DecodingError.dataCorrupted(
                .init(codingPath: codingPath + [key], debugDescription: numberProblem(error), underlyingError: error))
        }
    }
}

/// Describes Foundation's `numberIsNotRepresentableInSwift(parsed: "20.5")` in words.
func numberProblem(_ error: any Error) -> String {
    let text = String(describing: error)
    guard let open = text.range(of: "parsed: \""), let close = text[open.upperBound...].firstIndex(of: "\"") else {
        return "cannot be read (\(text))"
    }
    let number = String(text[open.upperBound..<close])
    if number.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }),
        Double(number).map({ $0.rounded() != $0 }) ?? true
    {
        return "\(number) is not a whole number"
    }
    if number.hasPrefix("-") { return "\(number) must not be negative" }
    return "\(number) is out of range"
}

/// Where a JSON syntax error sits, as `line L, column C: <problem>`, from Foundation's
/// "… around character N." (a 0-based byte offset); `nil` when `data` parses as JSON.
func jsonSyntaxProblem(_ data: Data) -> String? {
    do {
        _ = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        return nil
    } catch {
        let detail = ((error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String) ?? error.localizedDescription
        guard let marker = detail.range(of: "character "),
            let offset = Int(detail[marker.upperBound...].prefix(while: \.isNumber))
        else { return detail }
        let bytes = data.prefix(Swift.max(0, Swift.min(offset, data.count)))
        let line = bytes.reduce(1) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }
        let lineStart = bytes.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? bytes.startIndex
        let column = bytes.distance(from: lineStart, to: bytes.endIndex) + 1
        let problem = detail[..<marker.lowerBound].replacingOccurrences(of: " around ", with: "")
        return "line \(line), column \(column): \(problem.trimmingCharacters(in: .whitespaces))"
    }
}
