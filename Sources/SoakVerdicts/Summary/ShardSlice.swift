/// The part of a plan one shard ran (`summary.json` `run.shards.slice` of a `run --shard I/N`
/// report): its devices out of the plan's, the journeys it planned, and its share of the load.
package struct ShardSlice: Sendable, Codable, Equatable {
    /// Devices this shard drove (the devices `d` with `d mod N == I`).
    package var devices: Int
    /// Devices of the whole plan.
    package var planDevices: Int
    /// Journeys this shard planned (open model: its arrivals, every N-th of the schedule) or
    /// started (closed model).
    package var journeys: Int
    /// This shard's share of the plan's load, 0…1: `1/N` of the arrival rate in the open model,
    /// its share of the devices (the workers) in the closed model.
    package var loadShare: Double

    package init(devices: Int, planDevices: Int, journeys: Int, loadShare: Double) {
        self.devices = devices
        self.planDevices = planDevices
        self.journeys = journeys
        self.loadShare = loadShare
    }
}
