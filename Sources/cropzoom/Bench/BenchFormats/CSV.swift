import Foundation

// `--format csv`: one header line, one line per thread count, the columns of the JSON rows.

extension BenchResults {
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
}
