/// The soak tester's version, as `--version` prints it, `summary.json` records it
/// (`run.soakVersion`) and the report readers name it; `OptoLinkSoak.version` publishes it.
package enum SoakVersion {
    package static let current = "0.1.0"
}
