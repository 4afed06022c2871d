import Foundation

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// A structural check of JUnit XML, equivalent to the common JUnit XSD's rules for what CI reads:
/// a `testsuites` root; each `testsuite` with `name`, `tests`, `failures`, `errors`, `skipped`
/// and `time` whose counts match its `testcase` children; each `testcase` with `name`,
/// `classname` and a numeric `time`; at most one `failure` (with `message`) or `skipped` per
/// case; nothing else where the schema allows nothing else.
package final class JUnitStructure: NSObject, XMLParserDelegate {
    package var problems: [String] = []
    package var suites = 0
    package var cases = 0
    private var stack: [String] = []
    private var suite: (attributes: [String: String], cases: Int, failures: Int, skipped: Int)?
    private var caseOutcomes = 0
    private var rootCounts = (tests: 0, failures: 0, skipped: 0)
    private var rootAttributes: [String: String] = [:]

    package static func check(_ xml: String) -> JUnitStructure {
        let checker = JUnitStructure()
        let parser = XMLParser(data: Data(xml.utf8))
        parser.delegate = checker
        if !parser.parse() { checker.problems.append("not well-formed: \(parser.parserError.map { "\($0)" } ?? "?")") }
        return checker
    }

    package func parser(
        _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        let parent = stack.last
        stack.append(name)
        let allowed: [String?: Set<String>] = [
            nil: ["testsuites"], "testsuites": ["testsuite"], "testsuite": ["properties", "testcase", "system-out"],
            "properties": ["property"], "testcase": ["failure", "skipped", "error", "system-out", "system-err"],
        ]
        guard allowed[parent]?.contains(name) == true else {
            problems.append("<\(name)> not allowed inside <\(parent ?? "document")>")
            return
        }
        func require(_ keys: [String]) {
            for key in keys where attributes[key] == nil { problems.append("<\(name)> lacks \(key)") }
        }
        switch name {
        case "testsuites": rootAttributes = attributes
        case "testsuite":
            require(["name", "tests", "failures", "errors", "skipped", "time"])
            if attributes["time"].flatMap(Double.init) == nil { problems.append("testsuite time not numeric") }
            suite = (attributes, 0, 0, 0)
            suites += 1
        case "testcase":
            require(["name", "classname", "time"])
            if attributes["time"].flatMap(Double.init) == nil { problems.append("testcase time not numeric") }
            suite?.cases += 1
            cases += 1
            caseOutcomes = 0
        case "failure":
            require(["message"])
            suite?.failures += 1
            caseOutcomes += 1
        case "skipped":
            suite?.skipped += 1
            caseOutcomes += 1
        case "property": require(["name", "value"])
        default: break
        }
        if caseOutcomes > 1 { problems.append("a testcase has more than one failure/skipped") }
    }

    package func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?)
    {
        stack.removeLast()
        if name == "testsuite", let suite {
            let a = suite.attributes
            for (key, count) in [("tests", suite.cases), ("failures", suite.failures), ("skipped", suite.skipped)]
            where a[key] != String(count) {
                problems.append("testsuite \(a["name"] ?? "?") \(key)=\(a[key] ?? "nil") but \(count) counted")
            }
            rootCounts.tests += suite.cases
            rootCounts.failures += suite.failures
            rootCounts.skipped += suite.skipped
        }
        if name == "testsuites" {
            for (key, count) in [
                ("tests", rootCounts.tests), ("failures", rootCounts.failures), ("skipped", rootCounts.skipped),
            ] where rootAttributes[key] != nil && rootAttributes[key] != String(count) {
                problems.append("testsuites \(key)=\(rootAttributes[key] ?? "") but \(count) counted")
            }
        }
    }
}
