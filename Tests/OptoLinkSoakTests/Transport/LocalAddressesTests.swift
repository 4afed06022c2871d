import Foundation
import OptoLink
import OptoLinkHTTP
import OptoLinkStaging
import Synchronization
import Testing

@testable import OptoLinkSoak

/// `--local-ips`: the list's syntax, the address plan it keeps, and whole runs whose devices
/// leave from their own loopback addresses; IPv6 literals as the base URL on both transports.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct LocalAddressesTests {
    @Test func listsExpandAddressesRangesAndBlocksInOrder() throws {
        let pool = try LocalAddressPool.parse(
            "127.0.0.9, 127.0.0.2-127.0.0.4,::1,127.0.1.0/30,127.0.0.3,fd00::fe-fd00::101")
        #expect(
            pool.addresses == [
                "127.0.0.9", "127.0.0.2", "127.0.0.3", "127.0.0.4", "::1", "127.0.1.1", "127.0.1.2", "fd00::fe",
                "fd00::ff", "fd00::100", "fd00::101",
            ])
        #expect(try LocalAddressPool.parse("127.0.0.5/32").addresses == ["127.0.0.5"])
        #expect(try LocalAddressPool.parse("::1/128").addresses == ["::1"])
        #expect(try LocalAddressPool.parse("127.0.0.0/22").addresses.count == 1_022)
    }

    @Test(arguments: [
        ("127.0.0.2,", "an empty item"),
        ("127.0.0.300", "127.0.0.300: not an IP address"),
        ("127.0.0.9-127.0.0.2", "runs backwards"),
        ("127.0.0.2-::1", "both be IPv4 or both IPv6"),
        ("127.0.0.0/33", "prefix length must be 0…32"),
        ("10.0.0.0/8", "more than 65536 addresses"),
        ("127.0.0.1-127.1.0.1", "more than 65536 addresses"),
        ("fd00::1-fe00::1", "more than 65536 addresses"),
    ])
    func badListsAreRefusedNamingTheItem(_ list: String, _ problem: String) {
        #expect(throws: SoakProfileError.self) { try LocalAddressPool.parse(list) }
        let message = (try? LocalAddressPool.parse(list)).map { _ in "" } ?? Self.message(list)
        #expect(message.hasPrefix("--local-ips: "))
        #expect(message.contains(problem))
    }

    private static func message(_ list: String) -> String {
        do {
            _ = try LocalAddressPool.parse(list)
            return ""
        } catch {
            return "\(error)"
        }
    }

    /// The profile field takes the same list, checked when the profile is read; the flag replaces it.
    @Test func theProfileFieldIsCheckedAndTheFlagReplacesIt() throws {
        let good = try SoakProfile.decode(
            Data(
                Self.profile.replacingOccurrences(
                    of: #""count": 12,"#, with: #""count": 12, "localIPs": "127.0.0.2-127.0.0.20","#
                ).utf8))
        #expect(good.devices.localIPs == "127.0.0.2-127.0.0.20")
        var options = SoakRunOptions(profilePath: "p.json")
        options.localIPs = "::1,127.0.0.5"
        #expect(try options.apply(to: good).devices.localIPs == "::1,127.0.0.5")
        let bad = Self.profile.replacingOccurrences(
            of: #""count": 12,"#, with: #""count": 12, "localIPs": "127.0.0.9-127.0.0.2","#)
        #expect(throws: SoakProfileError.self) { try SoakProfile.decode(Data(bad.utf8)) }
        do {
            _ = try SoakProfile.decode(Data(bad.utf8))
        } catch {
            #expect("\(error)".contains("devices.localIPs"))
            #expect("\(error)".contains("runs backwards"))
        }
    }

    private func population(count: Int, sharedNAT: Double) -> [VirtualDevice] {
        VirtualDevice.population(DevicePopulation(count: count, sharedNAT: sharedNAT), seed: 7)
    }

    @Test func thePlanKeepsItsShapeAndDependsOnTheGlobalIndexOnly() throws {
        let devices = population(count: 40, sharedNAT: 0.5)
        let nat = devices.filter(\.sharedNAT)
        #expect(!nat.isEmpty && nat.count < devices.count)
        let pool = try LocalAddressPool.parse("127.0.0.2-127.0.0.201")
        let plan = try SourceAddressPlan(devices: devices, pool: pool)
        #expect(plan.used.count == devices.count - nat.count + 1)
        #expect(Set(nat.map { plan.addressByDevice[$0.id] }) == [plan.sharedAddress])
        let own = devices.filter { !$0.sharedNAT }.compactMap { plan.addressByDevice[$0.id] }
        #expect(Set(own).count == own.count && !own.contains(plan.sharedAddress ?? ""))
        // The same plan again: the same addresses; the devices carry them as bound client IPs.
        #expect(try SourceAddressPlan(devices: devices, pool: pool) == plan)
        let bound = plan.bind(devices)
        #expect(bound.allSatisfy { $0.bindsSource && $0.clientIP == plan.addressByDevice[$0.id] })
        // Shards of the plan: their own devices' addresses are disjoint, the shared NAT address aside.
        let shards = (0..<3).map { index in
            Set(
                devices.indices.filter { SoakShard(index: index, count: 3).owns($0) && !devices[$0].sharedNAT }
                    .compactMap { plan.addressByDevice[devices[$0].id] })
        }
        #expect(shards[0].isDisjoint(with: shards[1]) && shards[1].isDisjoint(with: shards[2]))
    }

    @Test func aPoolSmallerThanThePlanSaysHowManyAddressesItNeeds() throws {
        let devices = population(count: 10, sharedNAT: 0)
        let pool = try LocalAddressPool.parse("127.0.0.2-127.0.0.5")
        #expect(throws: SoakProfileError.self) { try SourceAddressPlan(devices: devices, pool: pool) }
        do {
            _ = try SourceAddressPlan(devices: devices, pool: pool)
        } catch {
            #expect("\(error)".contains("the plan needs 10 source addresses"))
            #expect("\(error)".contains("the list has 4"))
        }
    }

    /// 12 devices, half behind one NAT address; a launch and two events each.
    private static let profile = """
        {"name": "local-ips", "seed": 3,
         "devices": {"count": 12, "sharedNAT": 0.5, "sharedNATAddress": "198.51.100.9"},
         "journeys": [{"name": "j", "steps": [{"kind": "firstLaunch"}, {"kind": "event", "name": "e", "repeat": 2}]}],
         "load": {"model": "open", "startRate": 40, "stages": [{"duration": 0.3, "target": 40}], "iterations": 12,
                  "grace": 60},
         "sdk": {"timeout": 3},
         "expect": {"thresholds": ["http.failed.rate == 0"]}}
        """

    /// Against the embedded emulator (keyed on the peer): every attempt's client IP is its
    /// device's pool address, the server saw as many distinct addresses as planned, exit 0.
    @Test func aRunLeavesFromThePlansAddressesAndTheServerSeesThem() async throws {
        let e2e = try EndToEndRun(profile: Self.profile)
        let result = await e2e.makeRun { $0.localIPs = "127.0.0.2-127.0.0.61" }.execute()
        #expect(result.exitCode == 0, "\(e2e.log)")
        let attempts = try e2e.attempts()
        let addresses = Set(attempts.compactMap(\.clientIP))
        #expect(addresses.allSatisfy { $0.hasPrefix("127.0.0.") })
        let planned = try #require(e2e.log.first { $0.hasPrefix("source addresses: ") && $0.contains(" of the 60") })
        #expect(planned.hasPrefix("source addresses: \(addresses.count) of the 60 in --local-ips"))
        #expect(
            e2e.log.contains(
                "source addresses: the server saw \(addresses.count) distinct of \(addresses.count) planned (GET /__admin/peer)"
            ))
        #expect(e2e.server?.configuration.trustForwardedFor == false)
    }

    @Test(arguments: [
        (
            "127.0.0.2-127.0.0.4,192.0.2.10-192.0.2.40",
            "--local-ips: 192.0.2.10 cannot be bound: not an address of this machine"
        ),
        ("::1,127.0.0.2-127.0.0.40", "has no IPv6 address"),
        ("127.0.0.2-127.0.0.3", "the plan needs"),
    ])
    func badAddressesExitTwoBeforeTheRun(_ list: String, _ problem: String) async throws {
        let e2e = try EndToEndRun(profile: Self.profile)
        let result = await e2e.makeRun { $0.localIPs = list }.execute()
        #expect(result.exitCode == 2)
        #expect(result.error?.contains(problem) == true, "\(result.error ?? "")")
        #expect(
            !FileManager.default.fileExists(atPath: e2e.reportDirectory.appendingPathComponent("attempts.csv").path))
    }

    @Test func urlSessionCannotBindAndSaysSo() async throws {
        let e2e = try EndToEndRun(profile: Self.profile)
        let result = await e2e.makeRun {
            $0.localIPs = "127.0.0.2-127.0.0.61"
            $0.transport = .urlsession
        }.execute()
        #expect(result.exitCode == 2)
        #expect(result.error?.contains("--local-ips: needs the native transport") == true)
    }

    /// What reaches the server from a bound device's attempt: its address as the peer, neither
    /// the internal source field nor X-Forwarded-For — unless `--forwarded-for` asks for it.
    @Test(arguments: [false, true])
    func aBoundAttemptLeavesFromItsAddressWithXForwardedForOnlyWhenAsked(_ forwarded: Bool) async throws {
        let seen = Mutex<[(peer: String, source: String?, forwardedFor: String?)]>([])
        try await withHTTPServer(
            .init(),
            handler: { request, connection in
                seen.withLock {
                    $0.append(
                        (
                            connection.peerAddress, request.headers[SourceAddressField.name],
                            request.headers["X-Forwarded-For"]
                        ))
                }
                return .respond(HTTPResponse(status: 200, body: Array(#"{"ok":true}"#.utf8)))
            }
        ) { server in
            let client = try HTTPClient()
            let transport = NativeTransport(client: client)
            let middleware = DeviceAttemptMiddleware(
                cutoff: RunCutoff(control: RunControl(), timeline: RunTimeline(clock: ContinuousClock())),
                forwardedFor: forwarded ? ForwardedForMiddleware(clientIP: "127.0.0.9") : nil,
                sourceAddress: "127.0.0.9", extraHeaders: nil)
            let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/sdk/events"))
            let context = OptoLinkRequestContext(
                endpoint: .events, callId: 1, attempt: 1, instanceLabel: "d000001#1", timeout: .seconds(5))
            let response = try await middleware.intercept(
                OptoLinkHTTPRequest(method: "POST", url: url, body: Data("{}".utf8)), context: context,
                next: { try await transport.send($0, context: $1) })
            #expect(response.status == 200)
            await client.shutdown()
        }
        let requests = seen.withLock { $0 }
        #expect(requests.count == 1)
        #expect(requests.first?.peer == "127.0.0.9")
        #expect(requests.first?.source == nil)
        #expect(requests.first?.forwardedFor == (forwarded ? "127.0.0.9" : nil))
    }

    @Test func theFlagsParse() throws {
        guard
            let options = try SoakCommandLine.parse(
                ["run", "p.json", "--local-ips", "127.0.0.2-127.0.0.9,::1", "--forwarded-for"]).subcommand(
                    RunSubcommand.self)?.options
        else { throw SoakUsageError(message: "not a run") }
        #expect(options.localIPs == "127.0.0.2-127.0.0.9,::1")
        #expect(options.forwardedFor)
        #expect(throws: SoakUsageError.self) { try SoakCommandLine.parse(["run", "p.json", "--local-ips", "nope"]) }
    }

    /// `serve` on `::1` reached as `http://[::1]:PORT`, on both transports (the reachability
    /// probe and URLSession included).
    @Test(arguments: SoakTransportKind.allCases)
    func anIPv6LiteralBaseURLRunsOnBothTransports(_ transport: SoakTransportKind) async throws {
        let server = StagingServer(configuration: StagingConfiguration(host: "::1", port: 0, trustForwardedFor: true))
        try await server.start()
        let e2e = try EndToEndRun(
            profile: e2eProfile(
                devices: 4, rate: 40, steps: #"{"kind": "firstLaunch"}, {"kind": "event", "name": "e"}"#))
        var options = SoakRunOptions(profilePath: e2e.profileURL.path)
        options.outDirectory = e2e.reportDirectory.path
        options.progress = false
        options.baseURL = URL(string: "http://[::1]:\(server.port)")
        options.transport = transport
        var run = SoakRun(options: options)
        run.log = { _ in }
        let result = await run.execute()
        await server.stop()
        #expect(result.exitCode == 0, "\(result.error ?? "")")
        #expect(result.summary?.totals.errors == 0)
        #expect((result.summary?.totals.attempts ?? 0) >= 8)
    }
}
