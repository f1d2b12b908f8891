import CropZoomKit
import Foundation

// The figures of a bench report: medians and spreads of the runs, per-core rates, scaling efficiency against the
// baseline, CPU use, per-stage and wait times per frame, the ratio to ffmpeg; and the measurements' own sanity.

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

extension BenchResults {
    static let mib = 1024.0 * 1024.0

    /// Rounds to `digits` decimals, so the JSON stays readable.
    static func r(_ v: Double, _ digits: Int = 4) -> Double {
        let m = pow(10.0, Double(digits))
        return (v * m).rounded() / m
    }

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
}
