import CropZoomKit
import Foundation

// `cropzoom bench`: what was measured, the figures derived from it, and the three renderings —
// an aligned table for people, JSON and CSV for scripts (schema in docs/probe-and-bench.md, `version`
// field), and an SVG chart. Pure functions of the measurements, so tests can check them.

/// One measured run of one program at one thread count.
struct BenchRun: Equatable, Sendable {
    var wallSeconds: Double
    /// User + system CPU of the child process (`wait4`'s rusage).
    var cpuSeconds: Double
    /// Peak resident set of the child process (`ru_maxrss`).
    var peakRSSBytes: Int
    var frames: Int
    /// cropzoom's own statistics (`--stats`): busy seconds per stage and queue waits by the
    /// stage that waited. Empty for ffmpeg.
    var busySeconds: [String: Double] = [:]
    var waitSeconds: [String: Double] = [:]
    var poolHighWater: Int? = nil

    /// Frames over the wall time of the whole process, start-up included.
    var fps: Double { wallSeconds > 0 ? Double(frames) / wallSeconds : 0 }
}

/// The runs at one thread count (cropzoom's, and ffmpeg's when compared).
struct BenchPoint: Sendable {
    var threads: Int
    var runs: [BenchRun]
    var ffmpegRuns: [BenchRun] = []
    var ffmpegCommand: [String] = []
}

/// Median, minimum and maximum.
struct Spread: Codable, Equatable, Sendable {
    var median: Double, min: Double, max: Double

    init(_ values: [Double]) {
        let s = values.sorted()
        precondition(!s.isEmpty, "a spread of no values")
        let n = s.count
        median = n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2
        min = s[0]
        max = s[n - 1]
    }

    /// (max − min) / median: how much the runs disagree.
    var relativeRange: Double { median > 0 ? (max - min) / median : 0 }
}

/// The stages `--stats` times, in pipeline order (the table's columns and the JSON keys).
let benchStages = ["demux", "decode", "transform", "encode", "mux", "audio"]

/// The stage that waited, for each of the engine's wait counters (their stable JSON names,
/// `EngineWait`).
func benchWaitingStage(_ counter: String) -> String {
    EngineWait(rawValue: counter)?.stage.rawValue ?? "other"
}

/// The document `--format json` prints (schema `cropzoom-bench`, version 1; docs/probe-and-bench.md,
/// "Benchmarking"). Keys are snake_case; values in the units their names say.
struct BenchDocument: Codable, Sendable {
    struct Machine: Codable, Sendable {
        var cores: Int
        var cpu: String
        var system: String
    }
    struct Input: Codable, Sendable {
        var path: String
        var bundledSample: Bool
    }
    struct Job: Codable, Sendable {
        /// The command each run executes, `--threads` left out (it varies per row).
        var command: [String]
        var codec: String
        var outputSize: String
        var window: String
        /// "null" (nothing written) or "file" (`--write`: each run writes, then the file is removed).
        var sink: String
        var framesPerRun: Int
        var repeats: Int
    }
    struct FFmpegResult: Codable, Sendable {
        var command: [String]
        var fps: Spread
        var wallSeconds: Spread
        var cpuCores: Double
        var peakRssMib: Double
        /// cropzoom's median fps over ffmpeg's: above 1, cropzoom is faster.
        var speedRatio: Double
    }
    struct Run: Codable, Sendable {
        var wallSeconds: Double
        var cpuSeconds: Double
        var frames: Int
        var fps: Double
        var peakRssMib: Double
    }
    struct Row: Codable, Sendable {
        var threads: Int
        /// min(threads, cores): what "per core" and efficiency divide by.
        var coresUsed: Int
        var oversubscribed: Bool
        var frames: Int
        var fps: Spread
        var fpsPerCore: Double
        /// fps per core over the baseline row's fps per core (1 = perfect scaling).
        var efficiency: Double
        var wallSeconds: Spread
        var cpuSeconds: Double
        /// Median CPU seconds per wall second: how many cores were busy.
        var cpuCores: Double
        /// cpu_cores / cores_used.
        var cpuUtilisation: Double
        var stageMsPerFrame: [String: Double]
        var waitMsPerFrame: [String: Double]
        var poolHighWater: Int
        var peakRssMib: Double
        var runs: [Run]
        var ffmpeg: FFmpegResult?
    }

    var schema = "cropzoom-bench"
    var version = 1
    var cropzoomVersion: String
    var date: String
    var machine: Machine
    var input: Input
    var job: Job
    /// The thread count efficiency is measured against (the smallest one run).
    var baselineThreads: Int
    var ffmpegVersion: String?
    var warnings: [String]
    var results: [Row]

    func json() throws -> String { try snakeCaseJSON(self) }
}

/// Everything a bench run measured, and the figures derived from it.
struct BenchResults: Sendable {
    var cores: Int
    var cpuName: String
    var system: String
    var input: String
    var bundledSample: Bool
    var command: [String]
    var codec: String
    var outputSize: String
    var window: String
    var sinkIsFile: Bool
    var repeats: Int
    var ffmpegVersion: String?
    var points: [BenchPoint]
    var warnings: [String] = []
    var date = Date()

    static let mib = 1024.0 * 1024.0

    /// Rounds to `digits` decimals, so the JSON stays readable.
    static func r(_ v: Double, _ digits: Int = 4) -> Double {
        let m = pow(10.0, Double(digits))
        return (v * m).rounded() / m
    }

    var baseline: BenchPoint? { points.min { $0.threads < $1.threads } }

    /// The rows as the JSON reports them (the table and CSV show the same numbers).
    func rows() -> [BenchDocument.Row] {
        guard let base = baseline else { return [] }
        let baseFPSPerCore = Spread(base.runs.map(\.fps)).median / Double(min(base.threads, cores))
        return points.map { p in
            let used = min(p.threads, cores)
            let fps = Spread(p.runs.map(\.fps))
            let wall = Spread(p.runs.map(\.wallSeconds))
            let cpu = Spread(p.runs.map(\.cpuSeconds)).median
            let cpuCores = Spread(p.runs.map { $0.wallSeconds > 0 ? $0.cpuSeconds / $0.wallSeconds : 0 }).median
            let frames = p.runs.map(\.frames).max() ?? 0
            var stages: [String: Double] = [:]
            for s in benchStages {
                let per = p.runs.compactMap { r in r.busySeconds[s].map { $0 * 1000 / Double(max(1, r.frames)) } }
                if !per.isEmpty { stages[s] = Self.r(Spread(per).median) }
            }
            var waits: [String: Double] = [:]
            let waitStages = Set(p.runs.flatMap { $0.waitSeconds.keys })
            for s in waitStages {
                let per = p.runs.map { r in (r.waitSeconds[s] ?? 0) * 1000 / Double(max(1, r.frames)) }
                waits[s] = Self.r(Spread(per).median)
            }
            var ff: BenchDocument.FFmpegResult? = nil
            if !p.ffmpegRuns.isEmpty {
                let ffps = Spread(p.ffmpegRuns.map(\.fps))
                ff = .init(
                    command: p.ffmpegCommand, fps: round(ffps),
                    wallSeconds: round(Spread(p.ffmpegRuns.map(\.wallSeconds)), 4),
                    cpuCores: Self.r(
                        Spread(p.ffmpegRuns.map { $0.wallSeconds > 0 ? $0.cpuSeconds / $0.wallSeconds : 0 }).median, 3),
                    peakRssMib: Self.r(Spread(p.ffmpegRuns.map { Double($0.peakRSSBytes) / Self.mib }).median, 1),
                    speedRatio: Self.r(ffps.median > 0 ? fps.median / ffps.median : 0, 3))
            }
            return .init(
                threads: p.threads, coresUsed: used, oversubscribed: p.threads > cores, frames: frames,
                fps: round(fps), fpsPerCore: Self.r(fps.median / Double(used), 2),
                efficiency: Self.r(baseFPSPerCore > 0 ? fps.median / Double(used) / baseFPSPerCore : 0, 3),
                wallSeconds: round(wall, 4), cpuSeconds: Self.r(cpu, 3), cpuCores: Self.r(cpuCores, 3),
                cpuUtilisation: Self.r(cpuCores / Double(used), 3),
                stageMsPerFrame: stages, waitMsPerFrame: waits,
                poolHighWater: p.runs.compactMap(\.poolHighWater).max() ?? 0,
                peakRssMib: Self.r(Spread(p.runs.map { Double($0.peakRSSBytes) / Self.mib }).median, 1),
                runs: p.runs.map {
                    .init(
                        wallSeconds: Self.r($0.wallSeconds, 6), cpuSeconds: Self.r($0.cpuSeconds, 4),
                        frames: $0.frames, fps: Self.r($0.fps, 3),
                        peakRssMib: Self.r(Double($0.peakRSSBytes) / Self.mib, 1))
                },
                ffmpeg: ff)
        }
    }

    private func round(_ s: Spread, _ digits: Int = 2) -> Spread {
        var t = s
        t.median = Self.r(s.median, digits)
        t.min = Self.r(s.min, digits)
        t.max = Self.r(s.max, digits)
        return t
    }

    func document() -> BenchDocument {
        let iso = ISO8601DateFormatter()
        let rows = rows()
        return BenchDocument(
            cropzoomVersion: CropZoom.configuration.version, date: iso.string(from: date),
            machine: .init(cores: cores, cpu: cpuName, system: system),
            input: .init(path: input, bundledSample: bundledSample),
            job: .init(
                command: command, codec: codec, outputSize: outputSize, window: window,
                sink: sinkIsFile ? "file" : "null", framesPerRun: rows.first?.frames ?? 0, repeats: repeats),
            baselineThreads: baseline?.threads ?? 0, ffmpegVersion: ffmpegVersion, warnings: warnings, results: rows)
    }

    /// The measurements' own sanity: runs at one thread count that disagree by more than 10 %
    /// ((max − min) / median: a busy or noisy machine), and runs too short to measure (under
    /// 30 frames or 0.5 s, where start-up dominates).
    func sanityWarnings() -> [String] {
        var out: [String] = []
        let rows = rows()
        for row in rows where row.runs.count > 1 && row.fps.relativeRange > 0.10 {
            out.append(
                String(
                    format:
                        "runs at %d thread%@ varied by %.0f %% (min %.1f, max %.1f fps): the machine is busy or "
                        + "noisy; close other programs or raise --repeat",
                    row.threads, row.threads == 1 ? "" : "s", row.fps.relativeRange * 100, row.fps.min, row.fps.max))
        }
        if let fastest = rows.min(by: { $0.wallSeconds.median < $1.wallSeconds.median }),
            fastest.frames < 30 || fastest.wallSeconds.median < 0.5
        {
            out.append(
                String(
                    format:
                        "the input is too short to measure well: %d frames in %.2f s at %d thread%@ (start-up "
                        + "dominates; use a clip that takes at least 1 s)",
                    fastest.frames, fastest.wallSeconds.median, fastest.threads, fastest.threads == 1 ? "" : "s"))
        }
        return out
    }

    // MARK: table

    /// The aligned table for people.
    func table() -> String {
        let rows = rows()
        let compared = rows.contains { $0.ffmpeg != nil }
        var out = "cropzoom bench: \(input)\(bundledSample ? " (bundled sample)" : "")\n"
        out += "job: \(codec == "none" ? "decode + transform, no encoder" : codec), \(window) → \(outputSize), "
        out +=
            "\(rows.first?.frames ?? 0) frames a run, "
            + "\(sinkIsFile ? "written to a file" : "nothing written (null sink)")\n"
        out +=
            "machine: \(cores) core\(cores == 1 ? "" : "s"), \(cpuName); \(repeats) run\(repeats == 1 ? "" : "s") "
            + "per thread count "
        out +=
            "(median, min–max); efficiency against \(baseline?.threads ?? 1) "
            + "thread\(baseline?.threads == 1 ? "" : "s")\n\n"

        var header = ["threads", "fps (min–max)", "fps/core", "efficiency", "CPU cores"]
        header += benchStages.filter { s in rows.contains { $0.stageMsPerFrame[s] != nil } }.map { "\($0) ms/f" }
        header += ["waits ms/f", "pool", "peak RSS"]
        if compared { header += ["ffmpeg fps", "vs ffmpeg"] }
        let stageColumns = benchStages.filter { s in rows.contains { $0.stageMsPerFrame[s] != nil } }
        var lines: [[String]] = [header]
        for r in rows {
            var line = [
                "\(r.threads)\(r.oversubscribed ? "*" : "")",
                String(format: "%.1f (%.1f–%.1f)", r.fps.median, r.fps.min, r.fps.max),
                String(format: "%.1f", r.fpsPerCore),
                String(format: "%.0f %%", r.efficiency * 100),
                String(format: "%.2f", r.cpuCores),
            ]
            line += stageColumns.map { s in r.stageMsPerFrame[s].map { String(format: "%.2f", $0) } ?? "–" }
            line += [
                String(format: "%.2f", r.waitMsPerFrame.values.reduce(0, +)), "\(r.poolHighWater)",
                String(format: "%.0f MiB", r.peakRssMib),
            ]
            if compared {
                if let f = r.ffmpeg {
                    line += [String(format: "%.1f", f.fps.median), String(format: "%.2fx", f.speedRatio)]
                } else {
                    line += ["–", "–"]
                }
            }
            lines.append(line)
        }
        out += textColumns(lines) { row, column in column == 0 || row > 0 }  // numbers right-aligned
        if rows.contains(where: \.oversubscribed) {
            out += "* more threads than the machine's \(cores) cores: per core and efficiency use \(cores).\n"
        }
        out += "fps: frames / wall time of the whole run (start-up included); ms/f: busy milliseconds per frame "
        out += "by stage (all transform workers together); waits: time stages spent blocked on queues; "
        out += "pool: frame-pool high-water mark.\n"
        if compared, let f = rows.first(where: { $0.ffmpeg != nil })?.ffmpeg {
            out += "ffmpeg\(ffmpegVersion.map { " (\($0))" } ?? ""), e.g.: \(ChildProcess.shellQuoted(f.command))\n"
        }
        return out
    }

    // MARK: CSV

    static let csvHeader =
        [
            "version", "threads", "cores_used", "oversubscribed", "frames", "runs",
            "fps_median", "fps_min", "fps_max", "fps_per_core", "efficiency",
            "wall_median_s", "cpu_median_s", "cpu_cores", "cpu_utilisation",
        ]
        + benchStages.map { "\($0)_ms_per_frame" }
        + ["wait_ms_per_frame", "pool_high_water", "peak_rss_mib", "ffmpeg_fps_median", "speed_ratio_vs_ffmpeg"]

    /// One header line, one line per thread count; empty cells where nothing was measured.
    func csv() -> String {
        var out = Self.csvHeader.joined(separator: ",") + "\n"
        for r in rows() {
            var cells: [String] = [
                "1", "\(r.threads)", "\(r.coresUsed)", r.oversubscribed ? "true" : "false", "\(r.frames)",
                "\(r.runs.count)", "\(r.fps.median)", "\(r.fps.min)", "\(r.fps.max)", "\(r.fpsPerCore)",
                "\(r.efficiency)", "\(r.wallSeconds.median)", "\(r.cpuSeconds)", "\(r.cpuCores)",
                "\(r.cpuUtilisation)",
            ]
            cells += benchStages.map { s in r.stageMsPerFrame[s].map { "\($0)" } ?? "" }
            cells += [
                "\(Self.r(r.waitMsPerFrame.values.reduce(0, +)))", "\(r.poolHighWater)", "\(r.peakRssMib)",
                r.ffmpeg.map { "\($0.fps.median)" } ?? "", r.ffmpeg.map { "\($0.speedRatio)" } ?? "",
            ]
            out += cells.joined(separator: ",") + "\n"
        }
        return out
    }

    // MARK: SVG

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
