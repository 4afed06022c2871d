@testable import SoakReports
import Testing

/// The SVG charts report.html draws: axes, escaping, one path per series. `@testable`: the chart is
/// internal to the reports, and its memberwise initialisers are what the test builds charts with.
@Suite("SVG charts")
struct SVGChartTests {
    @Test("chart primitives: round ticks, escaped text, one path per series, empty charts say so")
    func chartPrimitives() {
        #expect(SVGChart.ticks(0, 1) == [0, 0.2, 0.4, 0.6000000000000001, 0.8, 1])
        #expect(SVGChart.ticks(0, 950) == [0, 200, 400, 600, 800, 1000])
        #expect(SVGChart.seconds(0.0123) == "12.3ms" && SVGChart.seconds(2) == "2s")
        let chart = SVGChart(
            title: "a <b> & \"c\"", xLabel: "x", yLabel: "y",
            series: [
                .init(name: "one", color: "#000", points: [(0, 1), (1, 2), (2, 3)]),
                .init(name: "two", color: "#f00", style: .points, dashed: true, points: [(0, 1), (2, 2)]),
            ], xReferences: [(1, "edge")]
        ).render()
        #expect(chart.contains("a &lt;b&gt; &amp; &quot;c&quot;"))
        #expect(chart.components(separatedBy: "<path").count - 1 == 2)
        #expect(chart.contains("<line class=\"ref\"") && chart.contains(">edge</text>"))
        #expect(chart.contains("fill-opacity=\"0.45\""))
        let empty = SVGChart(
            title: "t", xLabel: "x", yLabel: "y", series: [.init(name: "n", color: "#000", points: [])])
        #expect(empty.render().contains("no data") && !empty.hasData, "a report leaves such a chart out")
    }
}
