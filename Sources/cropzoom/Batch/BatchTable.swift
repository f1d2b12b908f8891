import CropZoomKit
import Foundation

// What a batch prints: the `--dry-run` line of each file, the end-of-batch table, the JSON report.
extension Batch {
    static func describe(_ item: BatchItem, base: TranscodeConfiguration, skipExisting: Bool) -> String {
        if item.result == .failed { return "\(item.input): would fail: \(item.error ?? "")" }
        if item.result == .skipped { return "\(item.input): skip (\(item.reason ?? ""))" }
        if skipExisting && RawPath.exists(item.output) {
            return "\(item.input): skip (\(item.output) exists)"
        }
        var cfg = base
        cfg.input = item.input
        cfg.output = item.output
        return planLine(cfg)
    }

    /// One `--dry-run` line: what `cfg` would do (`TranscodeJob.plan`), or why it would fail.
    static func planLine(_ cfg: TranscodeConfiguration) -> String {
        do {
            return planLine(cfg, plan: try TranscodeJob(configuration: cfg, naming: \.flag).plan())
        } catch {
            return "\(cfg.input): would fail: \(error.message)"
        }
    }

    /// The `--dry-run` line of `p`, the plan of `cfg`.
    static func planLine(_ cfg: TranscodeConfiguration, plan p: JobPlan) -> String {
        var line = "\(cfg.input): window \(p.window.width)x\(p.window.height) at (\(p.window.x), \(p.window.y)) → "
        line += "\(p.outputWidth)x\(p.outputHeight), orientation \(p.orientation), \(p.videoCodec) \(p.pixelFormat)"
        if !p.motion.isEmpty { line += ", moving: \(p.motion.joined(separator: ", ")) (window of the first frame)" }
        line += p.audio.isEmpty ? ", no audio" : ", audio \(p.audio.joined(separator: ", "))"
        line += " → \(cfg.output) (\(p.container))"
        return line
    }

    static func size(_ bytes: Int?) -> String {
        guard let b = bytes else { return "" }
        if b >= 1 << 20 { return String(format: "%.1f MiB", Double(b) / 1_048_576) }
        return String(format: "%.0f KiB", Double(b) / 1024)
    }

    /// The end-of-batch table: file, result, frames, fps, output size, output or error.
    static func table(_ items: [BatchItem]) -> String {
        let damaged = items.contains { $0.warning != nil }
        let damageColumn: [String] = damaged ? ["damage"] : []
        var rows: [[String]] = [["file", "result", "frames", "fps", "size"] + damageColumn + ["output / error"]]
        for i in items {
            var row: [String] = [i.input, i.result.rawValue, i.frames.map(String.init) ?? ""]
            row.append(i.fps.map { String(format: "%.1f", $0) } ?? "")
            row.append(size(i.outputBytes))
            if damaged { row.append(i.warning ?? "") }
            row.append(i.reason ?? (i.result.wrote || i.result == .skipped ? i.output : (i.error ?? "")))
            rows.append(row)
        }
        var out = textColumns(rows) { _, c in (2...4).contains(c) }
        let count = { (r: BatchItem.Result) in items.filter { $0.result == r }.count }
        out +=
            "\(items.count) file\(items.count == 1 ? "" : "s"): \(count(.ok)) ok, "
            + (count(.salvaged) > 0 ? "\(count(.salvaged)) salvaged, " : "") + "\(count(.failed)) failed, "
            + "\(count(.skipped)) skipped"
        if count(.interrupted) + count(.notRun) > 0 {
            out += ", \(count(.interrupted)) interrupted, \(count(.notRun)) not started"
        }
        return out + "\n"
    }

    static func reportJSON(
        _ items: [BatchItem], outDir: String, jobs: Int, threadsPerJob: Int, shard: String?,
        seconds: Double, interrupted: Bool
    ) throws -> String {
        try BatchReport(
            items, outDir: outDir, jobs: jobs, threadsPerJob: threadsPerJob, shard: shard, seconds: seconds,
            interrupted: interrupted, finished: !interrupted
        ).json()
    }
}
