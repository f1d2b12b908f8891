import ArgumentParser
import CropZoomKit
import Foundation

/// `cropzoom batch run` (the default: `cropzoom batch INPUT… --out-dir DIR`): the files here, N at a time, or one
/// shard of them (`--shard I/N|auto`) when a scheduler starts one batch per task.
struct BatchRun: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Transcode the files here, several at a time (the default: cropzoom batch INPUT… --out-dir DIR).",
        discussion: """
            Exit codes: 0 every file succeeded (or was skipped), 4 none failed but some input was salvaged, 1 some \
            file failed, 2 bad usage (nothing was started), 130 interrupted (SIGINT; 143 SIGTERM, or \
            --requeue-exit's code): running files are stopped and leave nothing behind, no new file starts, the \
            table so far is printed.
            """)

    @OptionGroup var files: BatchFileOptions
    @OptionGroup var outputs: BatchOutputOptions
    @OptionGroup var jobs: BatchJobsOption

    @Flag(
        name: .customLong("dry-run"),
        help: ArgumentHelp(
            "Print what would be done for each file (window, output size, rotation, codecs, output path) and do "
                + "nothing.")
    )
    var dryRun = false

    @Option(
        help: ArgumentHelp(
            "Process only shard I of N (1 ≤ I ≤ N): every N-th input by sorted path, starting at the I-th. Shards "
                + "1…N together cover every input once. 'auto' takes I (and N) from a scheduler's array task: "
                + "SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX (Kubernetes), AWS_BATCH_JOB_ARRAY_INDEX.",
            valueName: "I/N|auto"))
    var shard: String?

    @Option(
        help: ArgumentHelp(
            "With --shard auto: the number of shards, when the scheduler does not give it.", valueName: "N"))
    var shards: Int?

    @OptionGroup var requeue: RequeueExitOption

    @Option(help: "auto (a status line on a terminal, else none), bar, lines (one line per finished file), none.")
    var progress: StatusStyle = .auto

    @OptionGroup var settings: BatchSettingsOptions

    func validate() throws {
        if let shards, !(1...1000).contains(shards) {
            throw ValidationError("--shards takes a number from 1 to 1000 (got \(shards))")
        }
        if shards != nil && shard != "auto" {
            throw ValidationError(
                "--shards N is for --shard auto (a batch on a scheduler's array: cropzoom batch submit --shards N)")
        }
        if let shard, shard != "auto" { _ = try Batch.parseShard(shard) }
        // A shard's own earlier report may be replaced (checked in `run`, once the shard is known).
        if shard == nil { try outputs.refuseExistingReport() }
    }

    func run() throws {
        let (jobCount, threadsPerJob) = Batch.split(requested: jobs.jobs, cores: Batch.cores)
        let outRoot = files.outRoot
        let overwrite = outputs.overwrite
        let skipExisting = outputs.skipExisting

        // 1. Inputs: files, folders, globs → filtered, sorted, de-duplicated, sharded.
        var (found, protected) = try files.files(overwrite: overwrite)
        let environment = ProcessInfo.processInfo.environment
        let shardSpec = try shard.map { try ShardIndex.resolve($0, count: shards, environment: environment) }
        let shard = shardSpec.map { "\($0.index)/\($0.count)" }
        if let report = outputs.report, RawPath.exists(report) && !overwrite {
            // A shard run again (a retried pod, a requeued task) replaces its own report, and nothing else.
            let earlier = try? BatchReport.read(report)
            if earlier?.shard != shard || earlier?.outDir != outRoot.path {
                throw CommandError.usage(
                    "--report \(report) exists and is not this shard's report (add -y to replace it)")
            }
        }
        let total = found.count
        found = Batch.select(found, path: \.path, shard: shardSpec)
        if found.isEmpty, let shard {
            // A scheduler runs every shard it was told to: one with nothing to do has succeeded.
            let files = "\(total) file\(total == 1 ? "" : "s")"
            Stderr.write("cropzoom: note: shard \(shard) has no files (\(files) in all): nothing to do\n")
        }

        // 2. Each file: media? its output path; conflicts refused before any work. A file found by
        // scanning that is not media (or has no video) is skipped; one named directly fails.
        var items: [BatchItem] = []
        for f in found {
            items.append(Batch.probed(BatchItem(input: f.path, output: files.output(f)), scanned: f.scanned))
        }
        try Batch.checkConflicts(
            items, inputs: protected, mayReplace: { _ in skipExisting || overwrite },
            renameHint: "change --name or --out-dir", existsHint: "--skip-existing keeps it, -y replaces it")

        // 3. Dry run: the plan of each file.
        let base = try settings.configuration()
        if dryRun {
            for item in items { Stdout.write(Batch.describe(item, base: base, skipExisting: skipExisting) + "\n") }
            return
        }

        // 4. Run.
        for item in items where item.result == .pending {
            let dir = URL(fileURLWithPath: item.output).deletingLastPathComponent()
            do { try RawPath.makeDirectories(dir.path) } catch {
                throw CommandError.usage("\(dir.path): cannot create the output folder: \(error.reason)")
            }
        }
        let runner = BatchRunner(
            executable: Bench.executablePath(), arguments: settings.settings.arguments(),
            threadsPerJob: threadsPerJob, jobs: jobCount, skipExisting: skipExisting, overwrite: overwrite,
            style: progress.resolved)
        try Batch.execute(
            items, runner: runner, report: outputs.report, outDir: outRoot.path, shard: shard,
            requeueExit: requeue.requeueExit)
    }
}
