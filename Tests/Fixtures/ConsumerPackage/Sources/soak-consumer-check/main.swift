// What another package can do with the OptoLinkSoak product through its public API alone: load
// and validate a profile, set up a run from code, read a report. Run from the repository root by
// scripts/check-consumer.sh. Exits 1 on the first mismatch.
import Foundation
import OptoLinkSoak

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

func check(_ condition: Bool, _ what: String) {
    guard condition else {
        FileHandle.standardError.write(Data("soak-consumer-check FAILED: \(what)\n".utf8))
        exit(1)
    }
    print("ok  \(what)")
}

let root = URL(fileURLWithPath: CommandLine.arguments.dropFirst().first ?? ".")
let profile = try SoakProfile.load(contentsOf: root.appendingPathComponent("Profiles/smoke.json"))
check(profile.name == "smoke", "Profiles/smoke.json loads, name \(profile.name)")

do {
    _ = try SoakProfile.decode(Data(#"{"name":"x","seed":3,"seed":4}"#.utf8))
    check(false, "a duplicate key is refused")
} catch let error as SoakProfileError {
    check(error.message.contains("seed"), "a duplicate key is refused naming it: \(error.message)")
}

var options = SoakRunOptions(profilePath: "Profiles/smoke.json")
options.duration = 2
options.progress = false
let run = SoakRun(options: options)
check(run.options.duration == 2, "a run is set up from code")

do {
    _ = try SoakSummary.load(contentsOf: root.appendingPathComponent("no-such-report"))
    check(false, "a missing report is refused")
} catch let error as SoakReportError {
    check(error.message.contains("no-such-report"), "a missing report is refused naming it: \(error.message)")
}
check(OptoLinkSoak.version.isEmpty == false, "version \(OptoLinkSoak.version)")
