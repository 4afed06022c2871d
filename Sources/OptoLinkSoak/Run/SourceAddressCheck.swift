import Foundation
import OptoLinkHTTP

/// The pre-flight of `--local-ips` (`devices.localIPs`), before anything is recorded: the plan
/// fits the pool, every address it uses binds on this machine, the backend can be reached from
/// each one, and what the server sees as each one's client IP.
///
/// The server-side check asks `GET /__admin/peer` from each address; a backend that answers
/// `200 {"clientIP": "<the address its per-IP limits key on>"}` is checked (the embedded
/// emulator and `serve` do; behind nginx, `return 200 '{"clientIP":"$remote_addr"}'` in a
/// `location = /__admin/peer` does). Any other answer leaves it unchecked, and the report says so.
enum SourceAddressCheck {
    /// What the check found.
    struct Outcome: Sendable {
        var plan: SourceAddressPlan
        /// The lines to print and keep in the report's notes.
        var lines: [String]
    }

    /// Runs the check for `devices` (the whole population, in global order) against `baseURL`.
    ///
    /// - Throws: ``SoakProfileError`` naming the cause and the flag that fixes it: a transport
    ///   that cannot bind, a pool smaller than the plan, an address that does not bind here, a
    ///   host name that does not resolve, an address of an IP version the backend lacks, a
    ///   backend that cannot be reached from an address.
    static func run(
        list: String, devices: [VirtualDevice], shard: SoakShard, baseURL: URL, transport: SoakTransportKind,
        forwardedFor: Bool, tls: TLSConfiguration = .init(), adminToken: String? = nil
    ) async throws -> Outcome {
        guard transport == .native else {
            let why =
                baseURL.scheme?.lowercased() == "https"
                ? "the base URL is https://, which runs on URLSession" : "--transport urlsession was asked for"
            throw SoakProfileError(
                message: "--local-ips: needs the native transport (URLSession cannot choose the address a request "
                    + "leaves from), but \(why); use an http:// base URL and --transport native, or drop --local-ips")
        }
        let pool = try LocalAddressPool.parse(list)
        let plan = try SourceAddressPlan(devices: devices, pool: pool)
        for address in plan.used {
            if let problem = HTTPSourceAddress.bindProblem(address) {
                throw SoakProfileError(
                    message: "--local-ips: \(address) cannot be bound: \(problem); list addresses of this machine "
                        + "(on Linux all of 127.0.0.0/8 is local; of IPv6, only ::1)")
            }
        }
        let mine = Set(devices.indices.filter(shard.owns).compactMap { plan.addressByDevice[devices[$0].id] })
        let addresses = plan.used.filter(mine.contains)
        let seen = try await serverView(of: addresses, baseURL: baseURL, tls: tls, adminToken: adminToken)
        var lines = [summaryLine(plan: plan, pool: pool, shard: shard, shardAddresses: addresses.count)]
        lines.append(seenLine(seen, intended: addresses))
        lines.append(
            forwardedFor
                ? "source addresses: X-Forwarded-For carries each device's address too (--forwarded-for)"
                : "source addresses: no X-Forwarded-For is sent; the server's per-IP limits see the socket peer")
        return Outcome(plan: plan, lines: lines)
    }

    /// What `GET /__admin/peer` says from each address that answers it: address → its client IP.
    /// An `https://` backend is asked over TLS, verified as the run's own requests are (`tls`);
    /// with `adminToken`, as `Authorization: Bearer` (a `serve --admin-token-file` emulator wants it).
    private static func serverView(
        of addresses: [String], baseURL: URL, tls: TLSConfiguration, adminToken: String?
    ) async throws -> [String: String] {
        guard let (host, port, base) = NativeTransport.split(baseURL.absoluteString) else {
            throw SoakProfileError(message: "--local-ips: \(baseURL.absoluteString) is not an http:// URL")
        }
        let client: HTTPClient
        do {
            client = try HTTPClient(configuration: .init(maxConnectionsPerHost: 1, idleTimeout: .seconds(1), tls: tls))
        } catch {
            throw SoakProfileError(message: "--local-ips: the HTTP client for the check did not start: \(error)")
        }
        let prefix = base.hasSuffix("/") ? String(base.dropLast()) : base
        let usesTLS = baseURL.scheme?.lowercased() == "https"
        var seen: [String: String] = [:]
        for address in addresses {
            let request = HTTPClientRequest(
                method: "GET", host: host, port: port, target: prefix + "/__admin/peer",
                headers: adminToken.map { token -> HTTPHeaders in ["Authorization": "Bearer \(token)"] } ?? [:],
                sourceAddress: address,
                usesTLS: usesTLS)
            let response: HTTPClientResponse
            do {
                response = try await client.execute(request, timeout: .seconds(5))
            } catch {
                await client.shutdown()
                throw SoakProfileError(message: "--local-ips: \(address): \(describe(error, host: host))")
            }
            let object = try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
            if response.status == 200, let clientIP = object?["clientIP"] as? String { seen[address] = clientIP }
        }
        await client.shutdown()
        return seen
    }

    private static func describe(_ error: HTTPClientError, host: String) -> String {
        switch error {
        case .cannotResolve:
            "the backend's host \(host) does not resolve; fix --base-url (or its DNS)"
        case .invalidRequest(let why):
            "\(why); list addresses of the backend's IP version in --local-ips, or give --base-url a host that has both"
        case .connectionRefused, .cannotConnect, .timedOut, .connectionReset, .connectionClosed:
            "the backend \(host) cannot be reached from this address (\(error)); check --base-url and --local-ips"
        default: "\(error)"
        }
    }

    private static func summaryLine(
        plan: SourceAddressPlan, pool: LocalAddressPool, shard: SoakShard, shardAddresses: Int
    ) -> String {
        let own = plan.used.count - (plan.sharedAddress == nil ? 0 : 1)
        var parts = ["source addresses: \(plan.used.count) of the \(pool.addresses.count) in --local-ips"]
        if let shared = plan.sharedAddress {
            parts.append(
                "\(shared) shared by the \(plan.sharedDevices) devices behind the NAT, \(own) devices with their own")
        } else {
            parts.append("one per device")
        }
        if shard.count > 1 { parts.append("shard \(shard) uses \(shardAddresses)") }
        return parts.joined(separator: ", ")
    }

    private static func seenLine(_ seen: [String: String], intended: [String]) -> String {
        let checked = intended.filter { seen[$0] != nil }
        guard !checked.isEmpty else {
            return "source addresses: server view not checked (GET /__admin/peer gave no {\"clientIP\"}; see "
                + "Profiles/README.md, \"Source addresses\")"
        }
        let views = checked.compactMap { seen[$0] }
        let distinct = Set(views).count
        let wrong = checked.filter { seen[$0] != $0 }
        var line =
            "source addresses: the server saw \(distinct) distinct of \(checked.count) planned (GET /__admin/peer)"
        if let first = wrong.first, let view = seen[first] {
            line +=
                "; warning: \(wrong.count) seen as another address, e.g. \(first) as \(view) — a proxy in between "
                + "does not pass the peer on (have it set X-Forwarded-For $remote_addr, and the backend trust it)"
        }
        return line
    }
}
