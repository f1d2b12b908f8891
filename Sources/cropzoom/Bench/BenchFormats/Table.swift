import CropZoomKit
import Foundation

// `cropzoom bench`'s default format: an aligned table for people, with the job, the machine and a legend.

extension BenchResults {
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
}
