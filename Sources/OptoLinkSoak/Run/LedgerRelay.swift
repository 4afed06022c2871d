import OptoLinkStaging
import Synchronization

/// Where the run's ledger comes from: live through a relay, or read from the backend at the end.
enum LedgerSource {
    case live(LedgerRelay)
    case atEnd
}

/// Hands the embedded emulator's ledger entries to the run's recorder as the server stores them.
final class LedgerRelay: Sendable {
    private let recorder = Mutex<SoakRecorder?>(nil)
    private let entries = Mutex(0)

    /// Starts relaying to `recorder` (entries stored before are not this run's and are dropped).
    func connect(_ target: SoakRecorder) { recorder.withLock { $0 = target } }

    /// Entries relayed so far.
    var count: Int { entries.withLock { $0 } }

    /// The sink given to ``SoakBackend/followLedger(file:sink:)``.
    var forward: @Sendable (LedgerRow) -> Void {
        { [self] entry in
            guard let target = recorder.withLock({ $0 }) else { return }
            entries.withLock { $0 += 1 }
            target.ledgerRecorded(entry)
        }
    }
}
