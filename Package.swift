// swift-tools-version: 6.0
import PackageDescription

// Layering (imports point down only; each target lists only the targets it imports, so the
// compiler refuses a back edge):
//   optolink-soak (CLI) -> OptoLinkSoak (the runner)
//   OptoLinkSoak -> SoakReports -> SoakVerdicts -> SoakRecords -> SoakSupport
//   OptoLinkSoak -> { OptoLink, OptoLinkStaging -> { OptoLinkHTTP -> CEpoll, SoakSupport } }
// The SDK (OptoLink) imports nothing of ours; the emulator does not import the SDK. The records,
// verdicts and reports import neither the SDK nor the emulator: they have their own vocabulary
// (ContractEndpoint, LedgerRow, EmulatorRetained) and the runner maps into it
// (Sources/OptoLinkSoak/Recording/SDKRecordVocabulary.swift), so the verdicts never judge the SDK
// with its own code. OptoLinkHTTP imports CEpoll only.
//
// Platform floor: iOS 15, the contract's (seed 002), built with a Swift 6.0 compiler or later.
// One manifest, because SwiftPM's `platforms` is package-wide and an app adds this package by URL,
// which reads this file: iOS 15 is the floor of every target, and it is the SDK's own. The SDK
// (OptoLink) uses nothing newer outside an availability guard: its clock is its own protocol
// (OptoLinkClock, not `Clock`/`Duration`, which are iOS 16), `TaskExecutor` (iOS 18) sits behind
// `#available` with a global-pool fallback, and `nonisolated(nonsending)` (Swift 6.2) behind
// `#if compiler(>=6.2)`. scripts/check-sdk-floor.py checks that in CI (a static check: nothing
// here can build for Apple platforms). The macOS entry is the tools' floor, not the SDK's: the
// soak tester, emulator and HTTP stack use `Mutex`/`Atomic` (macOS 15); they are Linux/macOS
// tools an app never links, and the SDK's sources stay within macOS 12 (iOS 15's twin) as well.
// A separate SDK manifest (a second package) was not chosen: SwiftPM does not let a package in a
// subfolder reach `Sources/OptoLink`, so the SDK would have to move or be duplicated.
let package = Package(
    name: "OptoLink",
    platforms: [.iOS(.v15), .macOS(.v15)],
    products: [
        .library(name: "OptoLink", targets: ["OptoLink"]),
        .library(name: "OptoLinkStaging", targets: ["OptoLinkStaging"]),
        // Test doubles for app developers testing against the SDK (README, "Testing your app").
        .library(name: "OptoLinkTestSupport", targets: ["OptoLinkTestSupport"]),
        // The soak tester as a library: a short public API (Sources/OptoLinkSoak/OptoLinkSoak.swift)
        // to load profiles, run them and read their reports from code.
        .library(name: "OptoLinkSoak", targets: ["OptoLinkSoak"]),
        .executable(name: "optolink-soak", targets: ["optolink-soak"]),
    ],
    targets: [
        // The event loop's one system-call shim: epoll/accept4/eventfd (Linux) beside their portable
        // POSIX twins (poll, accept+fcntl, pipe); see docs/LINUX.md, "Event loop backends".
        .target(name: "CEpoll"),
        // HTTP/1.1 codec + non-blocking event loop, server and client. The client's TLS binds the
        // system's OpenSSL 3 at run time (dlopen of libssl.so.3), not through a system-library
        // target: that would need libssl-dev's headers to build, which a machine with only the
        // Swift toolchain lacks (docs/LINUX.md §2b).
        .target(name: "OptoLinkHTTP", dependencies: ["CEpoll"]),
        // The SDK an app embeds.
        .target(
            name: "OptoLink",
            resources: [.copy("Resources/PrivacyInfo.xcprivacy")]
        ),
        // The staging emulator: the backend contract, limits, match ladder, faults, ledger.
        .target(name: "OptoLinkStaging", dependencies: ["OptoLinkHTTP", "SoakSupport"]),
        // Test doubles: a public product for app tests, also used by our own suites.
        .target(name: "OptoLinkTestSupport", dependencies: ["OptoLink"]),
        // The soak tester's lower rooms, each importing only the ones below it:
        // small helpers shared with the emulator (seeded RNG, strict decoding, one JSON value);
        .target(name: "SoakSupport"),
        // the run's records and vocabulary (attempt, call, open records, ledger rows; outcomes;
        // endpoints; device launch and call key; CSV codec);
        .target(name: "SoakRecords", dependencies: ["SoakSupport"]),
        // the verdicts, thresholds, summary and compare: passes over the records;
        .target(name: "SoakVerdicts", dependencies: ["SoakRecords", "SoakSupport"]),
        // the report writers (text, HTML, JUnit, Prometheus, Markdown) over the summary.
        .target(name: "SoakReports", dependencies: ["SoakVerdicts", "SoakRecords", "SoakSupport"]),
        // The soak runner: profiles, virtual devices, driver, transports, backends, recorder, commands.
        .target(
            name: "OptoLinkSoak",
            dependencies: [
                "SoakReports", "SoakVerdicts", "SoakRecords", "SoakSupport", "OptoLink", "OptoLinkStaging",
                "OptoLinkHTTP", "CEpoll",
            ]),
        // The CLI: parses arguments and calls OptoLinkSoak.
        .executableTarget(name: "optolink-soak", dependencies: ["OptoLinkSoak"]),
        // Benchmark server for Benchmarks/http-server.sh (the HTTP layer alone, one trivial route).
        .executableTarget(
            name: "optolink-http-bench", dependencies: ["OptoLinkHTTP"], path: "Benchmarks/HTTPServerBench"),
        // The driver's lower layers alone (native client; SDK over it) for Benchmarks/peers.sh.
        .executableTarget(
            name: "optolink-client-bench", dependencies: ["OptoLinkHTTP", "OptoLink", "OptoLinkSoak", "SoakRecords"],
            path: "Benchmarks/ClientLayersBench"),

        .testTarget(name: "OptoLinkTests", dependencies: ["OptoLink", "OptoLinkTestSupport"]),
        .testTarget(name: "OptoLinkHTTPTests", dependencies: ["OptoLinkHTTP", "SoakSupport"]),
        .testTarget(
            name: "OptoLinkStagingTests",
            dependencies: ["OptoLinkStaging", "OptoLinkHTTP", "OptoLink", "OptoLinkTestSupport", "SoakSupport"]
        ),
        // Synthetic soak records (attempts, calls, ledger rows) and a JUnit XML checker, shared by the soak
        // test targets.
        .target(name: "SoakTestSupport", dependencies: ["SoakRecords"], path: "Tests/SoakTestSupport"),
        .testTarget(name: "SoakSupportTests", dependencies: ["SoakSupport"]),
        .testTarget(name: "SoakRecordsTests", dependencies: ["SoakRecords", "SoakSupport"]),
        .testTarget(
            name: "SoakVerdictsTests", dependencies: ["SoakVerdicts", "SoakRecords", "SoakSupport", "SoakTestSupport"]),
        .testTarget(
            name: "SoakReportsTests", dependencies: ["SoakReports", "SoakVerdicts", "SoakRecords", "SoakTestSupport"]),
        .testTarget(
            name: "OptoLinkSoakTests",
            dependencies: [
                "OptoLinkSoak", "SoakReports", "SoakVerdicts", "SoakRecords", "SoakSupport", "SoakTestSupport",
                "OptoLink", "OptoLinkStaging", "OptoLinkTestSupport",
            ]
        ),
    ]
)
