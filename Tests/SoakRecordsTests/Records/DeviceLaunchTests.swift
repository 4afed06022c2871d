import Foundation
import SoakRecords
import Testing

@Suite("DeviceLaunch and CallKey")
struct DeviceLaunchTests {
    @Test("a launch's label is <device>#<launch> and parses back to the same launch")
    func roundTrip() {
        let launches = [
            DeviceLaunch(device: "d000042", launch: 3), DeviceLaunch(device: "d1", launch: 12),
            DeviceLaunch(device: "dé#v", launch: 1), DeviceLaunch(device: "", launch: 0),
        ]
        #expect(launches.map(\.label) == ["d000042#3", "d1#12", "dé#v#1", "#0"])
        for launch in launches {
            #expect(DeviceLaunch(label: launch.label) == launch)
            #expect("\(launch)" == launch.label)
        }
    }

    @Test(
        "a label without a launch number is launch 0 of a device named by the whole label",
        arguments: ["no-launch", "d#x", "d#", "d#3x", "d# 3"])
    func malformed(label: String) {
        #expect(DeviceLaunch(label: label) == DeviceLaunch(device: label, launch: 0))
    }

    @Test("the launch is after the last #; no label is launch 0 of device ?")
    func lastHashAndMissing() {
        #expect(DeviceLaunch(label: "ü#1#2") == DeviceLaunch(device: "ü#1", launch: 2))
        #expect(DeviceLaunch(label: nil) == DeviceLaunch(device: "?", launch: 0))
    }

    @Test("launches order by device, then by launch number (not by label text)")
    func order() {
        let sorted = [
            DeviceLaunch(device: "d2", launch: 1), DeviceLaunch(device: "d1", launch: 10),
            DeviceLaunch(device: "d1", launch: 9),
        ].sorted()
        #expect(sorted.map(\.label) == ["d1#9", "d1#10", "d2#1"])
    }

    @Test("a launch encodes as its label, and keys a JSON object by labels")
    func json() throws {
        let ids = [DeviceLaunch(device: "d1", launch: 2): "uuid-A", DeviceLaunch(device: "d3", launch: 1): "uuid-B"]
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let data = try encoder.encode(ids)
        #expect(String(decoding: data, as: UTF8.self) == #"{"d1#2":"uuid-A","d3#1":"uuid-B"}"#)
        #expect(try JSONDecoder().decode([DeviceLaunch: String].self, from: data) == ids)
        let one = try encoder.encode([DeviceLaunch(device: "d7", launch: 4)])
        #expect(String(decoding: one, as: UTF8.self) == #"["d7#4"]"#)
        #expect(try JSONDecoder().decode([DeviceLaunch].self, from: one) == [DeviceLaunch(device: "d7", launch: 4)])
    }

    @Test("an attempt and its call record name the same call key")
    func callKey() {
        let attempt = AttemptRecord(
            device: "d5", launch: 2, callId: 9, endpoint: .events, attempt: 2, intendedStart: 0, actualStart: 0,
            end: 1, status: 200, errorKind: nil, retryAfterSeconds: nil, requestBytes: 0, responseBytes: 0,
            correlationId: nil)
        let call = CallRecord(
            device: "d5", launch: 2, callId: 9, endpoint: .events, attempts: 2, intendedStart: 0, start: 0, end: 1,
            outcome: .ok, finalStatus: 200, correlationId: nil, deviceId: nil)
        let key = CallKey(DeviceLaunch(device: "d5", launch: 2), callId: 9)
        #expect(CallKey(attempt) == key && CallKey(call) == key)
        #expect(key.device == "d5" && key.launch == 2)
        #expect(CallKey(DeviceLaunch(device: "d5", launch: 10), callId: 1) > key)
        #expect(CallKey(DeviceLaunch(device: "d5", launch: 2), callId: 10) > key)
    }
}
