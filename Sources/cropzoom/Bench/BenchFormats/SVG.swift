import Foundation

// `--chart FILE.svg`: fps and efficiency against the thread count, as a plain SVG 1.1 chart.

extension BenchResults {
    /// fps (left axis) and efficiency (right axis) against the thread count, one point per
    /// thread count; ffmpeg's fps too when compared. Plain SVG 1.1 that any browser opens.
    func svg() -> String {
        let rows = rows()
        let w = 720.0
        let h = 430.0
        let left = 70.0
        let right = 70.0
        let top = 76.0
        let bottom = 56.0
        let plotW = w - left - right
        let plotH = h - top - bottom
        // Axes end on round numbers: four steps of 1, 2, 2.5 or 5 × a power of ten.
        func niceTop(_ v: Double) -> Double {
            let raw = max(v, 1e-9) / 4
            let magnitude = pow(10, floor(log10(raw)))
            let step = [1.0, 2, 2.5, 5, 10].map { $0 * magnitude }.first { $0 >= raw } ?? 10 * magnitude
            return step * 4
        }
        let maxFPS = niceTop(max(1, rows.map { max($0.fps.max, $0.ffmpeg?.fps.max ?? 0) }.max() ?? 1) * 1.05)
        let maxEff = niceTop(max(1.0, rows.map(\.efficiency).max() ?? 1) * 1.05)
        func x(_ i: Int) -> Double {
            rows.count == 1 ? left + plotW / 2 : left + plotW * Double(i) / Double(rows.count - 1)
        }
        func yFPS(_ v: Double) -> Double { top + plotH * (1 - v / maxFPS) }
        func yEff(_ v: Double) -> Double { top + plotH * (1 - v / maxEff) }
        func f(_ v: Double) -> String { String(format: "%.1f", v) }

        var s = """
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(w))" height="\(Int(h))" \
            viewBox="0 0 \(Int(w)) \(Int(h))" font-family="sans-serif" font-size="12">
            <title>cropzoom bench: \(xmlEscaped(input))</title>
            <rect width="100%" height="100%" fill="white"/>
            <text x="\(f(w / 2))" y="22" text-anchor="middle" font-size="15">cropzoom bench — \
            \(xmlEscaped((input as NSString).lastPathComponent)), \
            \(xmlEscaped(codec == "none" ? "decode + transform" : codec)), \(cores) cores</text>
            <text x="\(f(w / 2))" y="40" text-anchor="middle" fill="#555">fps (median of \(repeats), bars min–max) \
            and scaling efficiency against \(baseline?.threads ?? 1) thread\(baseline?.threads == 1 ? "" : "s")</text>
            <line x1="\(f(left))" y1="\(f(top + plotH))" x2="\(f(left + plotW))" y2="\(f(top + plotH))" stroke="black"/>
            <line x1="\(f(left))" y1="\(f(top))" x2="\(f(left))" y2="\(f(top + plotH))" stroke="#1f77b4"/>
            <line x1="\(f(left + plotW))" y1="\(f(top))" \
            x2="\(f(left + plotW))" y2="\(f(top + plotH))" stroke="#d62728"/>

            """
        for k in 0...4 {
            let v = maxFPS * Double(k) / 4
            let e = maxEff * Double(k) / 4
            s +=
                "<line x1=\"\(f(left))\" y1=\"\(f(yFPS(v)))\" x2=\"\(f(left + plotW))\" y2=\"\(f(yFPS(v)))\" "
                + "stroke=\"#eee\"/>\n"
            s +=
                "<text x=\"\(f(left - 6))\" y=\"\(f(yFPS(v) + 4))\" text-anchor=\"end\" "
                + "fill=\"#1f77b4\">\(String(format: v > 0 && v < 10 ? "%.1f" : "%.0f", v))</text>\n"
            s +=
                "<text x=\"\(f(left + plotW + 6))\" y=\"\(f(yEff(e) + 4))\" "
                + "fill=\"#d62728\">\(String(format: "%.0f%%", e * 100))</text>\n"
        }
        s +=
            "<text x=\"18\" y=\"\(f(top + plotH / 2))\" transform=\"rotate(-90 18 \(f(top + plotH / 2)))\" "
            + "text-anchor=\"middle\" fill=\"#1f77b4\">frames per second</text>\n"
        s +=
            "<text x=\"\(f(w - 14))\" y=\"\(f(top + plotH / 2))\" transform=\"rotate(90 \(f(w - 14)) "
            + "\(f(top + plotH / 2)))\" text-anchor=\"middle\" fill=\"#d62728\">efficiency</text>\n"
        s += "<text x=\"\(f(left + plotW / 2))\" y=\"\(f(h - 14))\" text-anchor=\"middle\">threads</text>\n"
        for (i, r) in rows.enumerated() {
            s +=
                "<text x=\"\(f(x(i)))\" y=\"\(f(top + plotH + 18))\" "
                + "text-anchor=\"middle\">\(r.threads)\(r.oversubscribed ? "*" : "")</text>\n"
        }
        func polyline(_ cls: String, _ color: String, _ dash: String, _ ys: [Double]) -> String {
            let pts = ys.enumerated().map { "\(f(x($0.offset))),\(f($0.element))" }.joined(separator: " ")
            return
                "<polyline class=\"\(cls)\" points=\"\(pts)\" fill=\"none\" stroke=\"\(color)\" "
                + "stroke-width=\"2\"\(dash.isEmpty ? "" : " stroke-dasharray=\"\(dash)\"")/>\n"
        }
        s += polyline("fps", "#1f77b4", "", rows.map { yFPS($0.fps.median) })
        s += polyline("efficiency", "#d62728", "6 4", rows.map { yEff($0.efficiency) })
        if rows.contains(where: { $0.ffmpeg != nil }) {
            let ff = rows.enumerated().compactMap { i, r in r.ffmpeg.map { (i, $0) } }
            let pts = ff.map { "\(f(x($0.0))),\(f(yFPS($0.1.fps.median)))" }.joined(separator: " ")
            s +=
                "<polyline class=\"ffmpeg\" points=\"\(pts)\" fill=\"none\" stroke=\"#7f7f7f\" stroke-width=\"2\" "
                + "stroke-dasharray=\"2 3\"/>\n"
            for (i, fr) in ff {
                s +=
                    "<circle class=\"ffmpeg-point\" cx=\"\(f(x(i)))\" cy=\"\(f(yFPS(fr.fps.median)))\" r=\"3.5\" "
                    + "fill=\"#7f7f7f\"><title>ffmpeg, \(rows[i].threads) threads: "
                    + "\(String(format: "%.1f", fr.fps.median)) fps</title></circle>\n"
            }
        }
        for (i, r) in rows.enumerated() {
            s +=
                "<line class=\"fps-range\" x1=\"\(f(x(i)))\" y1=\"\(f(yFPS(r.fps.min)))\" x2=\"\(f(x(i)))\" "
                + "y2=\"\(f(yFPS(r.fps.max)))\" stroke=\"#1f77b4\"/>\n"
            s +=
                "<circle class=\"fps-point\" cx=\"\(f(x(i)))\" cy=\"\(f(yFPS(r.fps.median)))\" r=\"4.5\" "
                + "fill=\"#1f77b4\"><title>\(r.threads) threads: \(String(format: "%.1f", r.fps.median)) fps "
                + "(\(String(format: "%.1f", r.fps.min))–\(String(format: "%.1f", r.fps.max)))</title></circle>\n"
            s +=
                "<circle class=\"efficiency-point\" cx=\"\(f(x(i)))\" cy=\"\(f(yEff(r.efficiency)))\" r=\"4\" "
                + "fill=\"white\" stroke=\"#d62728\" stroke-width=\"2\"><title>\(r.threads) threads: "
                + "efficiency \(String(format: "%.0f", r.efficiency * 100)) %</title></circle>\n"
        }
        let legendY = top - 14
        s += "<text x=\"\(f(left))\" y=\"\(f(legendY))\" fill=\"#1f77b4\">● cropzoom fps</text>\n"
        s += "<text x=\"\(f(left + 130))\" y=\"\(f(legendY))\" fill=\"#d62728\">○ efficiency</text>\n"
        if rows.contains(where: { $0.ffmpeg != nil }) {
            s += "<text x=\"\(f(left + 240))\" y=\"\(f(legendY))\" fill=\"#7f7f7f\">● ffmpeg fps</text>\n"
        }
        s += "</svg>\n"
        return s
    }
}

/// Escapes text for XML content and attribute values.
func xmlEscaped(_ s: String) -> String {
    var out = ""
    for c in s {
        switch c {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        case "\"": out += "&quot;"
        case "'": out += "&apos;"
        default: out.append(c)
        }
    }
    return out
}
