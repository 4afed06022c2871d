import Foundation
import OptoLinkSoak

// The CLI only parses and calls the library (OptoLinkSoak.main).
let code = await OptoLinkSoak.main(Array(CommandLine.arguments.dropFirst()))
exit(code)
