import Foundation
import Synchronization

/// A coding key built from any string or index (the emulator's, so profiles and emulator
/// configurations are strict the same way).
package typealias AnyCodingKey = AnyConfigurationKey

/// The problems found while decoding one profile, so validation reports every one in a single
/// pass instead of stopping at the first (`SoakProfile.decode` installs it for its decoding).
///
/// While it is installed, the field helpers below record a field's problem and go on with a
/// stand-in value (the field's default, `nil`, or an empty or neutral value), so the fields
/// after it are still checked; a part that cannot go on throws ``Reported``, which the enclosing
/// field helper swallows. Without it (a part decoded on its own), the first problem is thrown.
package final class ProfileIssues: Sendable {
    /// Thrown by a part whose problems are already recorded and that has no value to give.
    package struct Reported: Error {}

    @TaskLocal package static var current: ProfileIssues?

    private let problems = Mutex<[String]>([])

    package init() {}

    /// The problems so far, each `<field path>: <problem>`, in the order found.
    package var all: [String] { problems.withLock { $0 } }

    package func record(_ problem: String) {
        problems.withLock { $0.append(problem) }
    }

    package func record(_ error: DecodingError) {
        record(error.readableDescription)
    }

    /// Runs `body`; with issues being collected, a problem it throws is recorded and `nil`
    /// returned, else the problem is thrown.
    package static func collecting<T>(_ body: () throws -> T) throws -> T? {
        guard let issues = current else { return try body() }
        do {
            return try body()
        } catch is Reported {
            return nil
        } catch let error as DecodingError {
            issues.record(error)
            return nil
        }
    }
}

/// A neutral value a field takes after its problem was recorded, so decoding can go on.
package protocol ProfileStandIn {
    static var standIn: Self { get }
}

extension String: ProfileStandIn { package static var standIn: String { "" } }
extension Int: ProfileStandIn { package static var standIn: Int { 0 } }
extension UInt64: ProfileStandIn { package static var standIn: UInt64 { 0 } }
extension Double: ProfileStandIn { package static var standIn: Double { 0 } }
extension Bool: ProfileStandIn { package static var standIn: Bool { false } }
extension Array: ProfileStandIn { package static var standIn: [Element] { [] } }
extension Dictionary: ProfileStandIn { package static var standIn: [Key: Value] { [:] } }
extension Optional: ProfileStandIn { package static var standIn: Wrapped? { nil } }

extension Decoder {
    /// Refuses every key of this object not listed in `Keys` (`unknown field (expected one of …)`),
    /// so a typo in a profile (`"rate"` for `"target"`) fails instead of being ignored. With issues
    /// being collected, each unknown key is recorded and the known ones are still decoded.
    package func rejectUnknownKeys<Keys: CodingKey & CaseIterable>(_: Keys.Type) throws {
        let unknown = try unknownKeyErrors(Keys.self)
        guard let issues = ProfileIssues.current else {
            if let first = unknown.first { throw first }
            return
        }
        for error in unknown { issues.record(error) }
    }
}

extension KeyedDecodingContainer {
    /// Decodes an optional value and checks it with `valid`, throwing a message naming the field.
    package func decodeChecked<T: Decodable>(
        _ type: T.Type, forKey key: Key, default fallback: T, _ problem: String, _ valid: (T) -> Bool
    ) throws -> T {
        let value = try decodeFieldIfPresent(type, forKey: key) ?? fallback
        guard valid(value) else {
            try reportOrThrow(DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: problem))
            return fallback
        }
        return value
    }

    /// Throws `error`, or records it when issues are being collected (decoding goes on).
    package func reportOrThrow(_ error: DecodingError) throws {
        guard let issues = ProfileIssues.current else { throw error }
        issues.record(error)
    }

    /// Like ``decodeChecked(_:forKey:default:_:_:)`` for a required field.
    package func decodeRequired<T: Decodable>(_ type: T.Type, forKey key: Key, _ problem: String, _ valid: (T) -> Bool)
        throws
        -> T
    {
        // A value that did not decode is already reported; its stand-in is not checked.
        guard let value = try decodeCollected(type, forKey: key) else { return try standIn() }
        guard valid(value) else {
            // The invalid value stands in for itself: the profile is refused anyway.
            try reportOrThrow(DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: problem))
            return value
        }
        return value
    }
}

extension KeyedDecodingContainer {
    /// `decode(_:forKey:)`, but a number of the wrong kind (`20.5` for a whole number, `-1` for
    /// an unsigned one) becomes a `dataCorrupted` error naming this field. Foundation's decoder
    /// throws an internal error there that the top level reports as "not valid JSON" with no path.
    ///
    /// With issues being collected, a problem is recorded and a stand-in returned (``ProfileStandIn``);
    /// a type without one throws ``ProfileIssues/Reported``.
    package func decodeField<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try decodeCollected(type, forKey: key) ?? standIn()
    }

    /// The decoded value, or `nil` once its problem is recorded (issues being collected).
    private func decodeCollected<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        try ProfileIssues.collecting { try naming(key) { try decode(type, forKey: key) } }
    }

    /// `T`'s stand-in (``ProfileStandIn``), else ``ProfileIssues/Reported``: the part cannot go on.
    private func standIn<T>() throws -> T {
        guard let standIn = (T.self as? any ProfileStandIn.Type)?.standIn as? T else { throw ProfileIssues.Reported() }
        return standIn
    }

    /// `decodeIfPresent(_:forKey:)` with the same field naming as ``decodeField(_:forKey:)``; with
    /// issues being collected, a problem is recorded and `nil` returned.
    package func decodeFieldIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        try ProfileIssues.collecting { try naming(key) { try decodeIfPresent(type, forKey: key) } } ?? nil
    }

    /// Decodes an object of `name → V` entry by entry: with issues being collected, every entry's
    /// problem is recorded (`expect.limits.match: …`, `expect.limits.events: …`), and the good ones kept.
    package func decodeEachValue<V: Decodable>(_ type: V.Type, forKey key: Key) throws -> [String: V] {
        guard ProfileIssues.current != nil, contains(key) else { return try decodeField([String: V].self, forKey: key) }
        guard
            let object = try ProfileIssues.collecting({ try nestedContainer(keyedBy: AnyCodingKey.self, forKey: key) })
        else { return [:] }
        var values: [String: V] = [:]
        for name in object.allKeys {
            if let value = try ProfileIssues.collecting({ try object.decode(V.self, forKey: name) }) {
                values[name.stringValue] = value
            }
        }
        return values
    }

    /// Decodes an array element by element: with issues being collected, every element's
    /// problems are recorded (`journeys[3].steps[1].kind: …`), not only the first one's.
    package func decodeEach<E: Decodable>(_ type: E.Type, forKey key: Key) throws -> [E] {
        guard ProfileIssues.current != nil, contains(key) else { return try decodeField([E].self, forKey: key) }
        guard var list = try ProfileIssues.collecting({ try nestedUnkeyedContainer(forKey: key) }) else { return [] }
        var elements: [E] = []
        while !list.isAtEnd {
            if let element = try ProfileIssues.collecting({ try list.decode(E.self) }) {
                elements.append(element)
            } else {
                // A failed element leaves the container where it was: step over it.
                _ = try list.decode(SkippedValue.self)
            }
        }
        return elements
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
package func jsonSyntaxProblem(_ data: Data) -> String? {
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

/// Any JSON value, read and dropped (steps over an array element that did not decode).
private struct SkippedValue: Decodable {
    init(from decoder: any Decoder) throws {}
}
