import Foundation

/// The opt-in route cache behind ``OptoLinkConfig/routeCache``: the second of the three
/// fallback layers when `/data` cannot answer (the URL's own query is the first, the app's
/// default screen the third).
///
/// Entries live in the instance's key-value store under one key, as JSON, so a relaunch over
/// the same store finds them and a reset (which clears the store) forgets them. Each entry is
/// keyed by the URL's host, path and query and carries the wall-clock time of the successful
/// resolution that stored it. The list is kept in use order (least recently used first):
/// storing or serving a route moves it to the end, and when the list is longer than the bound
/// the front goes first.
///
/// One instance owns the store at a time (as it owns `deviceId`): the in-memory copy is read
/// once, then every change is written through under the same lock.
final class RouteCache: Sendable {
    /// One cached route.
    struct Entry: Codable, Sendable, Equatable {
        /// ``RouteCache/key(for:)`` of the URL that resolved.
        var key: String
        var linkId: String?
        var path: String
        var params: [String: String]?
        /// When `/data` answered, in seconds since 1970 (wall clock).
        var storedAt: Double
    }

    private struct Stored: Codable {
        var version: Int
        /// Least recently used first.
        var entries: [Entry]
    }

    /// The store key holding the JSON list.
    static let storeKey = "routeCache"
    /// How far in the future an entry's time may lie (the wall clock stepped back a little)
    /// and still count as fresh, in seconds; an entry further ahead is not trusted.
    static let futureTolerance: Double = 60

    private let store: any OptoLinkKeyValueStore
    private let maxAge: TimeInterval
    private let maxEntries: Int
    private let now: @Sendable () -> Date
    private let log: OptoLinkLog
    /// `nil` until first read from the store.
    private let entries = LockedBox<[Entry]?>(nil)

    init(
        store: any OptoLinkKeyValueStore, maxAge: TimeInterval, maxEntries: Int, now: @escaping @Sendable () -> Date,
        log: OptoLinkLog
    ) {
        self.store = store
        self.maxAge = maxAge.isNaN ? 0 : maxAge
        self.maxEntries = max(0, maxEntries)
        self.now = now
        self.log = log
    }

    /// The cache key of `url`: lowercased host, percent-encoded path, `?`, percent-encoded
    /// query (empty when none). The same short code on two hosts, or with two queries, is two entries.
    static func key(for url: URL) -> String {
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        let host = (components?.host ?? url.host ?? "").lowercased()
        return host + (components?.percentEncodedPath ?? url.path) + "?" + (components?.percentEncodedQuery ?? "")
    }

    /// Stores (or refreshes) the route `/data` just returned for `url`, as the most recently used.
    func remember(_ link: OptoLinkData, for url: URL) {
        guard maxEntries > 0 else { return }
        let entry = Entry(
            key: Self.key(for: url), linkId: link.linkId, path: link.path, params: link.params,
            storedAt: now().timeIntervalSince1970)
        update { list in
            list.removeAll { $0.key == entry.key }
            list.append(entry)
            if list.count > maxEntries { list.removeFirst(list.count - maxEntries) }
        }
    }

    /// The fresh cached route for `url` as a `.cached` link, marked most recently used; `nil`
    /// on a miss. A stale entry (older than the maximum age, or dated implausibly far in the
    /// future) is deleted and counts as a miss.
    func route(for url: URL) -> OptoLinkData? {
        let key = Self.key(for: url)
        let at = now().timeIntervalSince1970
        let hit: Entry? = update { list in
            guard let index = list.firstIndex(where: { $0.key == key }) else { return nil }
            let entry = list.remove(at: index)
            let age = at - entry.storedAt
            guard age <= maxAge, age >= -Self.futureTolerance, maxAge > 0 else {
                log.info("link: cached route for \(key) is stale (age \(Int(age)) s); deleted")
                return nil
            }
            list.append(entry)
            return entry
        }
        guard let hit else { return nil }
        return OptoLinkData(
            linkId: hit.linkId, path: hit.path, params: hit.params, matchMethod: .direct, confidence: .exact,
            isDeferred: false, score: nil, source: .cached)
    }

    /// Deletes the entry of `url` (the link is gone: 404 or 410). Returns whether one existed.
    @discardableResult
    func evict(_ url: URL) -> Bool {
        let key = Self.key(for: url)
        return update { list in
            guard let index = list.firstIndex(where: { $0.key == key }) else { return false }
            list.remove(at: index)
            return true
        }
    }

    /// The entries in use order (least recently used first), for tests.
    func snapshot() -> [Entry] {
        entries.withLock { cached in
            if cached == nil { cached = load() }
            return cached ?? []
        }
    }

    /// Applies `change` to the list under the lock and writes the list back when it changed.
    private func update<Result>(_ change: (inout [Entry]) -> Result) -> Result {
        entries.withLock { cached in
            var list = cached ?? load()
            let before = list
            let result = change(&list)
            cached = list
            if list != before { save(list) }
            return result
        }
    }

    private func load() -> [Entry] {
        guard let text = store.string(forKey: Self.storeKey) else { return [] }
        guard let stored = try? JSONDecoder().decode(Stored.self, from: Data(text.utf8)), stored.version == 1 else {
            log.warning("link: the stored route cache is unreadable; starting empty")
            return []
        }
        return stored.entries
    }

    private func save(_ list: [Entry]) {
        guard !list.isEmpty else {
            store.setString(nil, forKey: Self.storeKey)
            return
        }
        guard let data = try? JSONEncoder().encode(Stored(version: 1, entries: list)) else { return }
        store.setString(String(decoding: data, as: UTF8.self), forKey: Self.storeKey)
    }
}
