/// One request for ``HTTPClient``: where it goes, what it says, and which pool carries it.
package struct HTTPClientRequest: Sendable, Equatable {
    /// `GET`, `POST`, …
    package var method: String
    /// The host as written in the URL: an IP literal (IPv6 without brackets), `localhost`, or a
    /// name (resolved once per client and cached).
    package var host: String
    /// The TCP port, 1...65535.
    package var port: Int
    /// The origin-form target: path and query, e.g. `/sdk/events` or `/acme/x/data?deviceId=d`.
    package var target: String
    /// Header fields to send. `Host`, `Content-Length` and `Transfer-Encoding` are written by the
    /// client. `Expect: 100-continue` makes it send the body only after `100 Continue` (or after
    /// ``HTTPClient/Configuration/continueTimeout``).
    package var headers: HTTPHeaders
    /// The body bytes (sent with `Content-Length`).
    package var body: [UInt8]
    /// In ``HTTPClient/PoolMode/perPartition`` mode, the key of the one connection this request
    /// uses (e.g. a virtual device id); ignored in the shared mode.
    package var partition: String?
    /// The local IP address (numeric, no brackets) its connection binds to before connecting,
    /// so the server sees it as the peer (``HTTPSourceAddress``); `nil`: the kernel picks. Only
    /// connections from the same source address are shared, and only the host's addresses of
    /// the same IP version are tried.
    package var sourceAddress: String?
    /// `https`: sent over TLS (``HTTPClient/Configuration/tls``), on connections of its own pool.
    package var usesTLS: Bool

    /// A request; `target` must start with `/`.
    package init(
        method: String, host: String, port: Int, target: String, headers: HTTPHeaders = [:], body: [UInt8] = [],
        partition: String? = nil, sourceAddress: String? = nil, usesTLS: Bool = false
    ) {
        self.sourceAddress = sourceAddress
        self.usesTLS = usesTLS
        self.method = method
        self.host = host
        self.port = port
        self.target = target
        self.headers = headers
        self.body = body
        self.partition = partition
    }

    var expectsContinue: Bool {
        guard !body.isEmpty, let value = headers["Expect"] else { return false }
        return value.caseInsensitiveEquals("100-continue")
    }
}
