// swift-tools-version: 6.0
import PackageDescription

// A separate package that depends on OptoLink by path, as an app's test target would, and uses
// OptoLinkTestSupport's public API, and the OptoLinkSoak product's public API. Built and run by scripts/check-consumer.sh (in .ci/run):
// if a test double loses `public`, or the product disappears, this stops compiling.
let package = Package(
    name: "ConsumerPackage",
    platforms: [.iOS(.v16), .macOS(.v15)],
    dependencies: [.package(name: "OptoLink", path: "../../..")],
    targets: [
        .executableTarget(
            name: "consumer-check",
            dependencies: [
                .product(name: "OptoLink", package: "OptoLink"),
                .product(name: "OptoLinkTestSupport", package: "OptoLink"),
            ]
        ),
        // The soak library's public API only (no `package` access from here): load a profile, set
        // up a run, read a report.
        .executableTarget(
            name: "soak-consumer-check",
            dependencies: [.product(name: "OptoLinkSoak", package: "OptoLink")]
        ),
    ]
)
