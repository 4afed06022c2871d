import OptoLink
import OptoLinkStaging
import SoakRecords
import SoakVerdicts

// The runner's one translation from the SDK's and the emulator's types into the records'
// vocabulary: SoakRecords and SoakVerdicts import neither, so the verdicts never judge the SDK
// with its own code and a change in either shows up here, as a compile error.

extension ContractEndpoint {
    /// The contract endpoint the SDK's endpoint calls.
    package init(_ endpoint: OptoLinkEndpoint) {
        switch endpoint {
        case .match: self = .match
        case .data: self = .data
        case .session: self = .session
        case .identity: self = .identity
        case .identityClear: self = .identityClear
        case .events: self = .events
        }
    }
}

extension OpenOutcome {
    /// The outcome of an open whose wait ended with `link` (`nil`: nothing came); `cut` when the
    /// run's end stopped the wait.
    package init(_ link: OptoLinkData?, cut: Bool) {
        guard let link else {
            self = cut ? .cancelledByRun : .timedOut
            return
        }
        switch link.source {
        case .resolved, .deferred: self = .resolved
        case .cached: self = .cached
        case .raw: self = .raw
        }
    }
}

extension LedgerRow {
    /// The row of an entry the embedded emulator stored.
    package init(_ entry: StagingLedgerEntry) {
        self.init(
            sequence: entry.sequence, arrivedAt: entry.arrivedAt, endpoint: entry.endpoint, deviceId: entry.deviceId,
            apiKeySuffix: entry.apiKeySuffix, eventName: entry.eventName, externalId: entry.externalId,
            properties: entry.properties, faultAfterCommit: entry.faultAfterCommit)
    }
}

extension EmulatorRetained {
    /// What the embedded emulator says it holds.
    package init(_ retained: StagingRetained) {
        self.init(
            ledgerInMemory: retained.ledgerInMemory, ledgerTotal: retained.ledgerTotal, clicks: retained.clicks,
            devices: retained.devices, limiterKeys: retained.limiterKeys)
    }
}
