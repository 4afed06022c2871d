import Foundation

/// The common protocol of the two errors the SDK throws: ``OptoLinkApiError`` (a non-2xx
/// response) and ``OptoLinkConnectionError`` (no response). Seed 000, "The error pair".
public protocol OptoLinkError: Error, Sendable {}
