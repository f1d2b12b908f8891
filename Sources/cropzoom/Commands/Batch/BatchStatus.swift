import ArgumentParser
import CropZoomKit
import Foundation

/// `cropzoom batch status DIR` (before, `batch --status DIR`): where a batch submitted into DIR stands, read from its
/// state folder (the manifest and the shards' reports) and from the scheduler's queue.
struct BatchStatus: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Where a batch submitted into DIR stands: each shard's files done, its place in the queue.",
        discussion: "Exit codes: 0 shown, 2 no batch was submitted into DIR.")

    @Argument(help: ArgumentHelp("The output folder the batch was submitted into (its --out-dir).", valueName: "DIR"))
    var outDir: String

    func run() throws {
        let batch = ScheduledBatch(outDir: outDir)
        guard RawPath.exists(batch.manifestPath) else {
            throw CommandError.usage("\(outDir): no batch was submitted here (no \(batch.manifestPath))")
        }
        let manifest = try BatchManifest.read(batch.manifestPath)
        Stdout.write(Self.text(manifest, batch: batch))
    }

    /// The status as printed: the jobs and their place in the queue, a line per shard, the files' totals.
    static func text(_ manifest: BatchManifest, batch: ScheduledBatch) -> String {
        let submissions = batch.submissions()
        let live = ChildProcess.which("squeue") == nil ? nil : Slurm.liveTasks(submissions.map(\.job))
        let reports = batch.reports(shards: manifest.shards)
        var out = "\(manifest.outDir): \(manifest.files.count) files in \(manifest.shards) shards, submitted "
        out += "\(manifest.created)\n"
        for s in submissions {
            let tasks = live?.filter { $0.job == s.job }
            let place =
                tasks.map { $0.isEmpty ? "not in the queue" : "\($0.count) in the queue" } ?? "queue unknown"
            out += "job \(s.job) (array \(s.array), \(s.submitted)): \(place)\n"
        }
        var counts: [BatchItem.Result: Int] = [:]
        for i in 1...manifest.shards {
            let files = manifest.entries(shard: i).count
            let queued = live?.filter { $0.index == i }.map(\.state) ?? []
            var line = "shard \(i)/\(manifest.shards): "
            if let r = reports[i] {
                let done = r.files.filter { BatchReport.isDecisive($0.result) }
                for item in done { counts[item.result, default: 0] += 1 }
                let ok = done.filter { $0.result.wrote }.count
                let failed = done.filter { $0.result == .failed }.count
                let skipped = done.count - ok - failed
                let tally = "\(ok) ok, \(failed) failed, \(skipped) skipped"
                if r.isFinished {
                    line += "finished: \(files) file\(files == 1 ? "" : "s"), \(tally)"
                } else {
                    let state = queued.first?.lowercased() ?? (r.interrupted ? "stopped" : "not running")
                    line += "\(state): \(done.count) of \(files) files done (\(tally))"
                }
            } else {
                line +=
                    queued.first.map { "\($0.lowercased()): no file done yet" } ?? "no report (not started, or lost)"
            }
            out += line + "\n"
        }
        let total = manifest.files.count
        let decided = counts.values.reduce(0, +)
        out +=
            "\(total) file\(total == 1 ? "" : "s"): \((counts[.ok] ?? 0) + (counts[.salvaged] ?? 0)) ok, "
            + "\(counts[.failed] ?? 0) failed, "
        out += "\(counts[.skipped] ?? 0) skipped, \(total - decided) to do\n"
        return out
    }
}
