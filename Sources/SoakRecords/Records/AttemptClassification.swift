import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Pure helpers the recorder uses to describe an attempt without keeping its bytes.
package enum AttemptClassification {
    /// A short, value-free error kind for an attempt with no response (`timed_out`, …).
    /// A cancellation after at least the per-attempt timeout counts as `timed_out` (the
    /// SDK enforces its deadline by cancelling the transport call).
    package static func errorKind(_ error: any Error, elapsed: Double, timeout: Duration) -> AttemptErrorKind {
        let timeoutSeconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        if let urlError = error as? URLError {
            switch urlError.code {
            case .timedOut: return .timedOut
            case .networkConnectionLost: return .connectionLost
            case .cannotConnectToHost, .cannotFindHost: return .cannotConnect
            case .badServerResponse: return .badResponse
            case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
                .serverCertificateHasUnknownRoot, .serverCertificateNotYetValid:
                return .tlsFailed
            case .cancelled: return elapsed >= timeoutSeconds * 0.999 ? .timedOut : .cancelled
            default: return .other
            }
        }
        if error is CancellationError { return elapsed >= timeoutSeconds * 0.999 ? .timedOut : .cancelled }
        return .other
    }

    /// Whether a response with the endpoint's success status (201 from `/match`, 200 elsewhere)
    /// carries a body that is not the contract's: not a JSON object (an HTML page from a proxy or a
    /// WAF, an empty body, an array), or an object without the endpoint's required keys and types
    /// (``ContractBodyShape``: `200 {}` on `/sdk/events`, a `/match` without `matched`). The SDK
    /// takes such a body as a miss or ignores it, so without this check a server or proxy that
    /// answers 200 with anything would pass as healthy.
    package static func isOffContract(endpoint: ContractEndpoint, status: Int, body: Data) -> Bool {
        guard status == ContractStatus.success(of: endpoint) else { return false }
        func isContent(_ byte: UInt8) -> Bool { byte != 0x20 && byte != 0x09 && byte != 0x0A && byte != 0x0D }
        guard let first = body.firstIndex(where: isContent), let last = body.lastIndex(where: isContent),
            body[first] == UInt8(ascii: "{"), body[last] == UInt8(ascii: "}")
        else { return true }
        return !ContractBodyShape.fits(endpoint, body: body[first...last])
    }

    /// `N` from a 429 body `Retry after N second(s)`, else `nil`.
    package static func retryAfterSeconds(status: Int, body: Data) -> Int? {
        guard status == 429 else { return nil }
        let needle = Array("Retry after ".utf8)
        let bytes = [UInt8](body.prefix(4096))
        guard bytes.count >= needle.count else { return nil }
        var i = 0
        while i + needle.count <= bytes.count {
            if Array(bytes[i..<(i + needle.count)]) == needle {
                var j = i + needle.count
                var value = 0
                var digits = 0
                while j < bytes.count, bytes[j] >= 0x30, bytes[j] <= 0x39, digits < 9 {
                    value = value * 10 + Int(bytes[j] - 0x30)
                    j += 1
                    digits += 1
                }
                let rest = String(decoding: bytes[j..<min(j + 7, bytes.count)], as: UTF8.self)
                if digits > 0 && rest.hasPrefix(" second") { return value }
            }
            i += 1
        }
        return nil
    }

    /// The `opl_corr` property of an events body, else `nil`: read from the parsed JSON, so a
    /// property key that merely ends in `"opl_corr` (or a value that contains it) cannot stand in.
    /// The SDK's own bodies are read by ``CorrelationScanner``; any other shape by `JSONSerialization`.
    package static func correlationId(endpoint: ContractEndpoint, body: Data?) -> String? {
        guard endpoint == .events, let body else { return nil }
        if case .found(let value) = CorrelationScanner.scan(body) { return value }
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
            let properties = object["properties"] as? [String: Any]
        else { return nil }
        return properties["opl_corr"] as? String
    }

}
