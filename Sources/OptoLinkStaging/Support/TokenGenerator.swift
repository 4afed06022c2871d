import OptoLinkHTTP
import Synchronization
import SoakSupport

/// Issues unique click tokens `opl_` + 24 base-62 characters.
final class TokenGenerator: Sendable {
    private let random: Mutex<SplitMix64>
    private static let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)

    init(seed: UInt64) { random = Mutex(SplitMix64(seed: seed)) }

    func next() -> String {
        var bytes = Array("opl_".utf8)
        random.withLock { random in
            for _ in 0..<24 { bytes.append(Self.alphabet[Int(random.next() % 62)]) }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
