/// Which source address each virtual device leaves from under `--local-ips`, keeping the
/// profile's address plan: devices the profile puts behind its one shared NAT address share
/// one pool address, every other device gets its own.
///
/// The plan's distinct client IPs, taken in global device order (`d000001` first), get the
/// pool's addresses in order, so the choice depends on the device's global index only: the
/// shards of one plan (`--shard`, `--processes`) use disjoint addresses (the shared NAT
/// address excepted, shared by design), and a re-run the same ones.
package struct SourceAddressPlan: Sendable, Equatable {
    /// Device id → its pool address.
    package let addressByDevice: [String: String]
    /// The pool addresses the plan uses, in pool order.
    package let used: [String]
    /// Devices behind the shared NAT address, and the pool address they share (`nil`: none).
    package let sharedDevices: Int
    package let sharedAddress: String?

    /// Maps `devices` (the whole population, in global order) onto `pool`.
    ///
    /// - Throws: ``SoakProfileError`` when the pool has fewer addresses than the plan needs,
    ///   saying how many it needs and why.
    package init(devices: [VirtualDevice], pool: LocalAddressPool, source: String = "--local-ips") throws {
        var poolIndex: [String: Int] = [:]
        var shared = 0
        var sharedPlanIP: String?
        for device in devices {
            if device.sharedNAT {
                shared += 1
                sharedPlanIP = device.clientIP
            }
            if poolIndex[device.clientIP] == nil { poolIndex[device.clientIP] = poolIndex.count }
        }
        guard poolIndex.count <= pool.addresses.count else {
            let own = poolIndex.count - (sharedPlanIP == nil ? 0 : 1)
            let nat = sharedPlanIP == nil ? "" : "1 shared NAT address for \(shared) devices + "
            throw SoakProfileError(
                message: "\(source): the plan needs \(poolIndex.count) source addresses (\(nat)\(own) devices with "
                    + "their own), the list has \(pool.addresses.count); give at least \(poolIndex.count), "
                    + "e.g. --local-ips 127.0.0.2-\(Self.loopbackEnd(count: poolIndex.count))")
        }
        var byDevice: [String: String] = [:]
        byDevice.reserveCapacity(devices.count)
        for device in devices { byDevice[device.id] = pool.addresses[poolIndex[device.clientIP] ?? 0] }
        addressByDevice = byDevice
        used = Array(pool.addresses.prefix(poolIndex.count))
        sharedDevices = shared
        sharedAddress = sharedPlanIP.flatMap { poolIndex[$0] }.map { pool.addresses[$0] }
    }

    /// `devices` with each one's client IP replaced by its pool address, bound as its source.
    package func bind(_ devices: [VirtualDevice]) -> [VirtualDevice] {
        devices.map { device in addressByDevice[device.id].map { device.leaving(from: $0) } ?? device }
    }

    /// The last address of a 127.0.0.2-based range of `count` addresses (for the message).
    static func loopbackEnd(count: Int) -> String {
        let last = 2 + count - 1
        return "127.0.\(last / 256).\(last % 256)"
    }
}
