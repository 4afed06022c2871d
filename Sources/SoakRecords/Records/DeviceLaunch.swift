/// One launch of one virtual device: the device's id (`d000042`) and its launch number (from 1).
///
/// Its one string form, ``label``, is `<device>#<launch>` (`d000042#3`): the label the runner
/// gives each SDK instance (it reaches the recording middleware as the request context's
/// `instanceLabel`) and the key of a shard manifest's `launchDeviceIds`. ``init(label:)`` is
/// its one parser.
package struct DeviceLaunch: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The virtual device's id.
    package var device: String
    /// The launch number on that device (1 for the first; 0 when a label names no launch).
    package var launch: Int

    package init(device: String, launch: Int) {
        self.device = device
        self.launch = launch
    }

    /// Parses a label `<device>#<launch>`: the device is the text before the last `#`, the
    /// launch the integer after it. A label with no `#`, or no integer after its last `#`, is
    /// launch 0 of a device named by the whole label, and a missing label is launch 0 of
    /// device `?`, so an attempt of an instance the runner did not label is still recorded.
    package init(label: String?) {
        guard let label else {
            self.init(device: "?", launch: 0)
            return
        }
        // On UTF-8 bytes: a `Character` search would run grapheme breaking over the label per attempt.
        guard let hash = label.utf8.lastIndex(of: UInt8(ascii: "#")),
            let launch = Int(label[label.utf8.index(after: hash)...])
        else {
            self.init(device: label, launch: 0)
            return
        }
        self.init(device: String(label[..<hash]), launch: launch)
    }

    /// `<device>#<launch>`.
    package var label: String { "\(device)#\(launch)" }

    package var description: String { label }

    /// By device id, then launch number.
    package static func < (lhs: DeviceLaunch, rhs: DeviceLaunch) -> Bool {
        (lhs.device, lhs.launch) < (rhs.device, rhs.launch)
    }
}

/// Encoded as its ``DeviceLaunch/label`` (a JSON string), and as that string when it keys a
/// dictionary, so `[DeviceLaunch: String]` is a JSON object keyed by labels.
extension DeviceLaunch: Codable, CodingKeyRepresentable {
    package init(from decoder: any Decoder) throws {
        self.init(label: try decoder.singleValueContainer().decode(String.self))
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(label)
    }

    package var codingKey: any CodingKey { LabelKey(stringValue: label) }

    package init?<T: CodingKey>(codingKey: T) {
        self.init(label: codingKey.stringValue)
    }

    private struct LabelKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
