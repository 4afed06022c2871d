import Foundation

/// A small inline-SVG chart: axes with rounded ticks, line/step series and point series,
/// reference lines, a legend. No script, no font file, no external reference — it renders the
/// same in any browser and stays small (coordinates are rounded to 0.1 px).
///
/// The `<svg>` carries its x domain as `data-x-min`/`data-x-max` (and `data-axis="time"` for a
/// time chart), so a browser test can check that every time chart of a report spans the run.
struct SVGChart {
    enum Style {
        case line
        case points
    }

    struct Series {
        var name: String
        /// A CSS colour.
        var color: String
        var style: Style = .line
        /// Dashed lines mark the baseline run in a comparison.
        var dashed = false
        var points: [(x: Double, y: Double)]
        /// A line series is broken where two neighbouring points are further apart in x than
        /// this: an interval with no sample is drawn as a gap, not as a line across it.
        var gapOver: Double? = nil
    }

    /// What the x axis measures: `time` marks a chart on the report's shared run-time axis.
    enum Axis: String {
        case time
        case value
    }

    package var title: String
    var xLabel: String
    var yLabel: String
    var series: [Series]
    /// Formats y-axis tick values (e.g. seconds as `12ms`).
    var yFormat: (Double) -> String = { SVGChart.plain($0) }
    var xFormat: (Double) -> String = { SVGChart.plain($0) }
    /// A fixed x domain (every time chart of a report gets `0…run length`); `nil` fits the data.
    var xDomain: ClosedRange<Double>? = nil
    var xAxis = Axis.value
    /// Horizontal reference lines (a bucket's limit), with a label.
    var references: [(y: Double, label: String)] = []
    /// Vertical reference lines (the back-off chart's early and late boundaries), with a label.
    var xReferences: [(x: Double, label: String)] = []
    /// Forces the y axis to start at zero.
    var yFromZero = true
    /// Share of the x span left empty at each end (never below zero for data that is not), so
    /// points at the extremes stand clear of the axes.
    var xMargin = 0.0
    package var width = 860.0
    var height = 260.0

    private let left = 64.0
    private let right = 16.0
    private let bottom = 40.0

    /// The plottable points of every series (finite, inside a fixed x domain).
    private var plotted: [[(x: Double, y: Double)]] {
        series.map { s in
            s.points.filter { p in p.x.isFinite && p.y.isFinite && (xDomain.map { $0.contains(p.x) } ?? true) }
        }
    }

    /// `true` when at least one series has a point to draw; a report leaves a chart without any out.
    var hasData: Bool { plotted.contains { !$0.isEmpty } }

    /// The chart as an `<svg>` element (with `role="img"` and a `<title>`).
    package func render() -> String {
        let plotted = plotted
        let all = plotted.flatMap { $0 }
        var xMin = xDomain?.lowerBound ?? all.map(\.x).min() ?? 0
        var xMax = xDomain?.upperBound ?? all.map(\.x).max() ?? 1
        var out = "<svg class=\"chart\" viewBox=\"0 0 \(Int(width)) \(Int(height))\" role=\"img\" "
        out += "data-axis=\"\(xAxis.rawValue)\" data-x-min=\"\(xMin)\" data-x-max=\"\(xMax)\" "
        out += "xmlns=\"http://www.w3.org/2000/svg\"><title>\(MarkupEscaping.escape(title))</title>"
        out += "<text class=\"ct\" x=\"\(Int(left))\" y=\"16\">\(MarkupEscaping.escape(title))</text>"
        guard !all.isEmpty else {
            out += "<text class=\"empty\" x=\"\(Int(width / 2))\" y=\"\(Int(height / 2))\" text-anchor=\"middle\">"
            out += "no data</text></svg>"
            return out
        }
        let yMin = yFromZero ? 0 : (all.map(\.y).min() ?? 0)
        var yMax = max(all.map(\.y).max() ?? 1, references.map(\.y).max() ?? -.infinity)
        if xMax <= xMin { xMax = xMin + 1 }
        let margin = (xMax - xMin) * xMargin
        xMin = xMin >= 0 ? max(0, xMin - margin) : xMin - margin
        xMax += margin
        if yMax <= yMin { yMax = yMin + (yMin == 0 ? 1 : abs(yMin)) }
        let yTicks = Self.ticks(yMin, yMax)
        yMax = max(yMax, yTicks.last ?? yMax)
        let legend = legendLayout()
        let top = 30 + Double(legend.rows) * 14
        let frame = Frame(
            xMin: xMin, xMax: xMax, yMin: yMin, yMax: yMax, left: left, top: top, width: width - left - right,
            height: height - top - bottom)
        out += axes(frame, xTicks: Self.ticks(xMin, xMax), yTicks: yTicks)
        out += referenceLines(frame)
        out += seriesPaths(frame, plotted: plotted)
        // Legend under the title, wrapped into rows.
        for item in legend.items {
            let s = series[item.index]
            out +=
                "<g class=\"lg\" data-series=\"\(item.index)\"><rect x=\"\(Self.r(item.x))\" y=\"\(Self.r(item.y - 6))\" "
            out += "width=\"14\" height=\"4\" fill=\"\(s.color)\"\(s.dashed ? " fill-opacity=\"0.5\"" : "")/>"
            out +=
                "<text x=\"\(Self.r(item.x + 18))\" y=\"\(Self.r(item.y))\">\(MarkupEscaping.escape(s.name))</text></g>"
        }
        out += "</svg>"
        return out
    }

    /// The plot area and the data domain it shows: maps data coordinates to SVG coordinates.
    private struct Frame {
        var xMin, xMax, yMin, yMax: Double
        /// The plot area's left and top edges and its size, in SVG units.
        var left, top, width, height: Double

        func px(_ x: Double) -> Double { left + (x - xMin) / (xMax - xMin) * width }
        func py(_ y: Double) -> Double { top + height - (y - yMin) / (yMax - yMin) * height }
    }

    /// Grid lines, tick labels, the two axis lines and their labels.
    private func axes(_ f: Frame, xTicks: [Double], yTicks: [Double]) -> String {
        var out = "<g class=\"axis\">"
        for t in yTicks where t >= f.yMin && t <= f.yMax {
            let y = Self.r(f.py(t))
            out += "<line x1=\"\(Int(left))\" x2=\"\(Self.r(width - right))\" y1=\"\(y)\" y2=\"\(y)\" class=\"grid\"/>"
            out += "<text x=\"\(Int(left - 6))\" y=\"\(Self.r(f.py(t) + 4))\" text-anchor=\"end\">"
            out += "\(MarkupEscaping.escape(yFormat(t)))</text>"
        }
        for t in xTicks where t >= f.xMin && t <= f.xMax {
            out += "<text x=\"\(Self.r(f.px(t)))\" y=\"\(Self.r(height - bottom + 16))\" text-anchor=\"middle\">"
            out += "\(MarkupEscaping.escape(xFormat(t)))</text>"
        }
        let bottomEdge = Self.r(f.top + f.height)
        out += "<line x1=\"\(Int(left))\" x2=\"\(Int(left))\" y1=\"\(Int(f.top))\" y2=\"\(bottomEdge)\"/>"
        out += "<line x1=\"\(Int(left))\" x2=\"\(Self.r(width - right))\" y1=\"\(bottomEdge)\" "
        out += "y2=\"\(bottomEdge)\"/>"
        out += "<text x=\"\(Self.r(left + f.width / 2))\" y=\"\(Self.r(height - 6))\" text-anchor=\"middle\">"
        out += "\(MarkupEscaping.escape(xLabel))</text>"
        out += "<text transform=\"translate(14 \(Self.r(f.top + f.height / 2))) rotate(-90)\" text-anchor=\"middle\">"
        out += "\(MarkupEscaping.escape(yLabel))</text></g>"
        return out
    }

    /// The horizontal (`references`) and vertical (`xReferences`) reference lines with their labels.
    private func referenceLines(_ f: Frame) -> String {
        var out = ""
        for reference in references {
            let y = Self.r(f.py(reference.y))
            out += "<line class=\"ref\" x1=\"\(Int(left))\" x2=\"\(Self.r(width - right))\" y1=\"\(y)\" y2=\"\(y)\"/>"
            out += "<text class=\"reft\" x=\"\(Self.r(width - right - 4))\" y=\"\(Self.r(f.py(reference.y) - 4))\" "
            out += "text-anchor=\"end\">\(MarkupEscaping.escape(reference.label))</text>"
        }
        for reference in xReferences where reference.x >= f.xMin && reference.x <= f.xMax {
            let x = Self.r(f.px(reference.x))
            out +=
                "<line class=\"ref\" x1=\"\(x)\" x2=\"\(x)\" y1=\"\(Int(f.top))\" y2=\"\(Self.r(f.top + f.height))\"/>"
            out += "<text class=\"reft\" x=\"\(Self.r(f.px(reference.x) + 3))\" y=\"\(Self.r(f.top + 10))\">"
            out += "\(MarkupEscaping.escape(reference.label))</text>"
        }
        return out
    }

    /// One `<g>` per series: a path of line segments (broken at gaps) or of tiny squares.
    private func seriesPaths(_ f: Frame, plotted: [[(x: Double, y: Double)]]) -> String {
        var out = ""
        for (index, s) in series.enumerated() {
            let points = plotted[index]
            out += "<g class=\"series\" data-series=\"\(index)\">"
            switch s.style {
            case .line:
                let path = points.enumerated().map { i, p in
                    let joined = i > 0 && (s.gapOver.map { p.x - points[i - 1].x <= $0 } ?? true)
                    return "\(joined ? "L" : "M")\(Self.r(f.px(p.x))) \(Self.r(f.py(p.y)))"
                }.joined()
                out += "<path d=\"\(path)\" fill=\"none\" stroke=\"\(s.color)\" stroke-width=\"1.6\""
                out += s.dashed ? " stroke-dasharray=\"5 3\"/>" : "/>"
            case .points:
                // One path of tiny squares: far smaller than one element per point.
                let path = points.map { p in "M\(Self.r(f.px(p.x) - 2)) \(Self.r(f.py(p.y) - 2))h4v4h-4z" }.joined()
                out += "<path d=\"\(path)\" fill=\"\(s.color)\" fill-opacity=\"\(s.dashed ? "0.45" : "0.85")\"/>"
            }
            out += "</g>"
        }
        return out
    }

    /// Where each legend entry goes: rows of entries from the left margin, below the title.
    private func legendLayout() -> (items: [(index: Int, x: Double, y: Double)], rows: Int) {
        var items: [(index: Int, x: Double, y: Double)] = []
        var x = left
        var row = 0
        for (index, s) in series.enumerated() {
            let w = Double(s.name.count) * 6.2 + 30
            if x + w > width - right && x > left {
                row += 1
                x = left
            }
            items.append((index, x, 30 + Double(row) * 14))
            x += w
        }
        return (items, series.isEmpty ? 0 : row + 1)
    }

    /// About five round tick values covering `low…high` (steps of 1, 2 or 5 × 10ⁿ).
    static func ticks(_ low: Double, _ high: Double) -> [Double] {
        let span = high - low
        guard span > 0, span.isFinite else { return [low] }
        let raw = span / 5
        let magnitude = pow(10, floor(log10(raw)))
        let step = [1.0, 2, 5, 10].map { $0 * magnitude }.first { $0 >= raw } ?? raw
        var ticks: [Double] = []
        var t = floor(low / step) * step
        while t <= high + step * 0.5 && ticks.count < 12 {
            ticks.append(t)
            t += step
        }
        return ticks
    }

    package static func r(_ value: Double) -> String {
        let rounded = (value * 10).rounded() / 10
        // Coordinates come from report data; one that is not finite or is absurd is drawn at 0.
        guard rounded.isFinite, abs(rounded) < 1e12 else { return "0" }
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }

    static func plain(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e12 { return String(Int(value)) }
        return String(format: "%.3g", value)
    }

    /// Seconds as `12ms` / `1.5s`.
    package static func seconds(_ value: Double) -> String {
        if value == 0 { return "0" }
        return abs(value) < 1 ? SVGChart.plain(value * 1000) + "ms" : SVGChart.plain(value) + "s"
    }
}

/// Escapes text for HTML, SVG and XML: `& < > " '`, and characters XML 1.0 cannot carry become U+FFFD.
enum MarkupEscaping {
    package static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\t", "\n", "\r": out.unicodeScalars.append(scalar)
            default:
                let v = scalar.value
                let allowed = (0x20...0xD7FF).contains(v) || (0xE000...0xFFFD).contains(v) || v >= 0x10000
                out.unicodeScalars.append(allowed ? scalar : "\u{FFFD}")
            }
        }
        return out
    }
}
