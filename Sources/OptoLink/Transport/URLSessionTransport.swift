import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// SKELETON placeholder: the default transport over URLSession.
public final class URLSessionTransport: OptoLinkTransport {
    public init(session: URLSession = .shared) {}
    public func send(_ request: OptoLinkHTTPRequest, context: OptoLinkRequestContext) async throws -> OptoLinkHTTPResponse {
        throw URLError(.unsupportedURL)
    }
}
