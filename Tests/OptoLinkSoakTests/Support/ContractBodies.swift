import OptoLinkHTTP

/// Success responses with the contract's bodies (docs/CONTRACT.md §1), for the small test servers
/// whose answers must pass ``ContractBodyShape``.
enum ContractBodies {
    /// `200 {ok, deviceId, firstSeenAt, lastSeenAt}` from `POST /sdk/session`.
    static let session = HTTPResponse(
        status: 200,
        body: Array(
            #"{"ok":true,"deviceId":"d1","firstSeenAt":"2026-01-01T00:00:00Z","lastSeenAt":"2026-01-01T00:00:00Z"}"#
                .utf8))
}
