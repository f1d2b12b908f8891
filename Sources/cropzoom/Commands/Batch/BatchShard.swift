import ArgumentParser
import CropZoomKit
import Foundation

/// `cropzoom batch shard MANIFEST --shard I/N|auto` (before, `batch --manifest FILE --shard …`): one shard of a
/// submitted batch, as the job script runs it. Its files are those of the manifest; one whose output this batch
/// already wrote (an earlier run of the shard) is not done again. The shard's report (beside the manifest,
/// `reports/shard-I.json`, or `--report`) is rewritten after each file and at the end, whole each time: `finished`
/// says whether the shard went through its list.
struct BatchShard: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shard",
        abstract: "Run one shard of a submitted batch (what the scheduler's job script runs on each node).",
        discussion: """
            The manifest (written by batch submit) fixes the files, the output folder and the settings. Exit codes \
            as for batch run; with --requeue-exit CODE, CODE when SIGTERM stopped the shard.
            """)

    @Argument(
        help: ArgumentHelp("The batch's manifest (DIR/cropzoom-batch/manifest.json).", valueName: "manifest"))
    var manifest: String

    @Option(
        help: ArgumentHelp(
            "Which shard: I of N (1 ≤ I ≤ N), or 'auto': I from the scheduler's array task (SLURM_ARRAY_TASK_ID, "
                + "JOB_COMPLETION_INDEX, AWS_BATCH_JOB_ARRAY_INDEX), N from the manifest.",
            valueName: "I/N|auto"))
    var shard: String

    @Option(help: ArgumentHelp("The number of shards, checked against the manifest's.", valueName: "N"))
    var shards: Int?

    @OptionGroup var jobs: BatchJobsOption

    @Option(
        help: ArgumentHelp(
            "Write the shard's report here instead of beside the manifest (reports/shard-I.json).",
            valueName: "FILE.json"))
    var report: String?

    @OptionGroup var requeue: RequeueExitOption

    @Option(help: "auto (a status line on a terminal, else none), bar, lines (one line per finished file), none.")
    var progress: StatusStyle = .auto

    func validate() throws {
        if let shards, !(1...1000).contains(shards) {
            throw ValidationError("--shards takes a number from 1 to 1000 (got \(shards))")
        }
        if shard != "auto" { _ = try Batch.parseShard(shard) }
    }

    func run() throws {
        let path = manifest
        let manifest = try BatchManifest.read(path)
        if let shards, shards != manifest.shards {
            throw CommandError.usage("--shards \(shards): the batch of \(path) has \(manifest.shards) shards")
        }
        let spec: (index: Int, count: Int)
        do {
            spec = try ShardIndex.resolve(
                shard, count: manifest.shards, environment: ProcessInfo.processInfo.environment)
        } catch let e as ValidationError {
            throw CommandError.usage(e.message)
        }
        let reportPath = report ?? BatchManifest.reportPath(manifest: path, shard: spec.index)
        let previous = RawPath.exists(reportPath) ? try? BatchReport.read(reportPath) : nil
        var items: [BatchItem] = []
        for entry in manifest.entries(shard: spec.index) {
            var item = BatchItem(input: entry.input, output: entry.output)
            if BatchManifest.writtenByBatch(entry) {
                if let earlier = previous?.files.first(where: { $0.input == entry.input && $0.result.wrote }) {
                    item = earlier
                } else {
                    item.result = .ok
                    item.reason = "written by an earlier run of this shard"
                }
                item.outputBytes = RawPath.status(entry.output).map { Int($0.st_size) }
            } else if entry.existing != nil && manifest.skipExisting {
                item.result = .skipped
                item.outputBytes = entry.existing.map { Int($0.bytes) }
            } else {
                item = Batch.probed(item, scanned: entry.scanned)
            }
            if item.result == .pending {
                let dir = URL(fileURLWithPath: item.output).deletingLastPathComponent().path
                do { try RawPath.makeDirectories(dir) } catch {
                    item.result = .failed
                    item.error = "\(dir): cannot create the output folder: \(error.reason)"
                }
            }
            items.append(item)
        }
        let (jobCount, threadsPerJob) = Batch.split(requested: jobs.jobs ?? manifest.jobs, cores: Batch.cores)
        let shard = "\(spec.index)/\(spec.count)"
        let outDir = manifest.outDir
        let started = monotonicSeconds()
        var runner = BatchRunner(
            executable: Bench.executablePath(), arguments: manifest.arguments, threadsPerJob: threadsPerJob,
            jobs: jobCount, skipExisting: false, overwrite: manifest.overwrite, style: progress.resolved)
        runner.onFileDone = { items in
            let partial = BatchReport(
                items, outDir: outDir, jobs: jobCount, threadsPerJob: threadsPerJob, shard: shard,
                seconds: monotonicSeconds() - started, interrupted: false, finished: false)
            if let json = try? partial.json() { try? Bench.writeAtomically(json, to: reportPath) }
        }
        Stderr.write(
            "cropzoom: shard \(shard) of \(path): \(items.count) file\(items.count == 1 ? "" : "s"), "
                + "\(items.filter { $0.result == .pending }.count) to do\n")
        try Batch.execute(
            items, runner: runner, report: reportPath, outDir: outDir, shard: shard,
            requeueExit: requeue.requeueExit)
    }
}
