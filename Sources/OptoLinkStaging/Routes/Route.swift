/// A request's route, resolved from method and path.
enum Route: Sendable, Equatable {
    case match
    case data(orgKey: String, shortCode: String)
    case click(orgKey: String, shortCode: String)
    case session
    case identity
    case identityClear
    case events
    case aasa
    case admin(AdminRoute)
    case unknown

    enum AdminRoute: Sendable, Equatable {
        case ledger, counters, getFaults, putFaults, getLimits, putLimits, reset, health, peer
    }

    init(method: String, path rawPath: String) {
        // Express routes are not strict: `/match/` is `/match`.
        let path =
            rawPath.utf8.count > 1 && rawPath.utf8.last == UInt8(ascii: "/") ? String(rawPath.dropLast()) : rawPath
        switch (method, path) {
        case ("POST", "/match"): self = .match
        case ("POST", "/sdk/session"): self = .session
        case ("POST", "/sdk/identity"): self = .identity
        case ("POST", "/sdk/identity/clear"): self = .identityClear
        case ("POST", "/sdk/events"): self = .events
        case ("GET", "/.well-known/apple-app-site-association"): self = .aasa
        case ("GET", "/__admin/ledger"): self = .admin(.ledger)
        case ("GET", "/__admin/counters"): self = .admin(.counters)
        case ("GET", "/__admin/faults"): self = .admin(.getFaults)
        case ("PUT", "/__admin/faults"): self = .admin(.putFaults)
        case ("GET", "/__admin/limits"): self = .admin(.getLimits)
        case ("PUT", "/__admin/limits"): self = .admin(.putLimits)
        case ("POST", "/__admin/reset"): self = .admin(.reset)
        case ("GET", "/__admin/health"): self = .admin(.health)
        case ("GET", "/__admin/peer"): self = .admin(.peer)
        case ("GET", _):
            let segments = path.split(separator: "/", omittingEmptySubsequences: true)
            if segments.count == 3, segments[2] == "data", let org = Self.decode(segments[0]),
                let code = Self.decode(segments[1])
            {
                self = .data(orgKey: org, shortCode: code)
            } else if segments.count == 2, segments[0] != "__admin", let org = Self.decode(segments[0]),
                let code = Self.decode(segments[1])
            {
                self = .click(orgKey: org, shortCode: code)
            } else {
                self = .unknown
            }
        default: self = .unknown
        }
    }

    var endpoint: StagingEndpoint {
        switch self {
        case .match: .match
        case .data: .data
        case .click: .click
        case .session: .session
        case .identity: .identity
        case .identityClear: .identityClear
        case .events: .events
        case .aasa: .aasa
        case .admin: .admin
        case .unknown: .unknown
        }
    }

    private static func decode(_ segment: Substring) -> String? {
        segment.utf8.contains(UInt8(ascii: "%")) ? PercentDecoding.decode(segment) : String(segment)
    }
}

/// Percent-decoding for path segments and query values (`+` is a space in queries).
package enum PercentDecoding {
    static func decode<S: StringProtocol>(_ text: S, plusIsSpace: Bool = false) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let hi = iterator.next().flatMap(hexValue), let lo = iterator.next().flatMap(hexValue) else {
                    return nil
                }
                bytes.append(hi << 4 | lo)
            } else if plusIsSpace && byte == UInt8(ascii: "+") {
                bytes.append(UInt8(ascii: " "))
            } else {
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// The decoded value of `name` in a query string, or `nil`.
    package static func queryValue(_ query: String?, _ name: String) -> String? {
        guard let query else { return nil }
        let bytes = query.utf8
        var pairStart = bytes.startIndex
        while pairStart < bytes.endIndex {
            let pairEnd = bytes[pairStart...].firstIndex(of: UInt8(ascii: "&")) ?? bytes.endIndex
            let pair = bytes[pairStart..<pairEnd]
            let equals = pair.firstIndex(of: UInt8(ascii: "=")) ?? pairEnd
            let key = Substring(pair[pair.startIndex..<equals])
            if key == name
                || (key.utf8.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") })
                    && decode(key, plusIsSpace: true) == name)
            {
                return equals < pairEnd
                    ? decode(Substring(pair[bytes.index(after: equals)..<pairEnd]), plusIsSpace: true) : ""
            }
            pairStart = pairEnd < bytes.endIndex ? bytes.index(after: pairEnd) : bytes.endIndex
        }
        return nil
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
