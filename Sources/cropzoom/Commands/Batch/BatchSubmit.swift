import ArgumentParser
import CropZoomKit
import Foundation

/// The schedulers `batch submit` submits to.
enum SchedulerKind: String, ExpressibleByArgument, CaseIterable, Sendable {
    case slurm
}

/// `cropzoom batch submit INPUT… --out-dir DIR --shards N` (before, `batch --scheduler slurm`): the manifest of the
/// files (each file's output; with -y or --skip-existing, the outputs there now), the state folder and the job
/// script, submitted as an array of `--shards` tasks; then the wait, unless `--no-wait`, and the merged table and
/// report, with a local batch's exit codes.
struct BatchSubmit: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "submit",
        abstract: "Run the batch on a scheduler (Slurm): a job array of --shards tasks, waited for and merged.",
        discussion: """
            Exit codes as for batch run, for the whole batch: 0 every file succeeded (or was skipped), 4 none \
            failed but some input was salvaged, 1 some file failed or was never done, 2 bad usage (nothing was \
            submitted), 130 interrupted (SIGINT; 143 SIGTERM): Ctrl-C cancels the batch's jobs. \
            cropzoom batch status DIR shows where a submitted batch stands.
            """)

    @OptionGroup var files: BatchFileOptions
    @OptionGroup var outputs: BatchOutputOptions
    @OptionGroup var jobs: BatchJobsOption

    @Option(help: "The scheduler: slurm (the only one so far).")
    var scheduler: SchedulerKind = .slurm

    @Option(help: ArgumentHelp("Number of shards: the tasks of the scheduler's array.", valueName: "N"))
    var shards: Int?

    @Option(
        name: .customLong("scheduler-option"),
        help: ArgumentHelp(
            "An option for the scheduler's submission (repeatable), written into the job script as '#SBATCH ARG': "
                + "--scheduler-option=--partition=video --scheduler-option=--time=2:00:00.",
            valueName: "ARG"))
    var schedulerOptions: [String] = []

    @Option(
        help: ArgumentHelp(
            "Resubmit the shards that did not finish (killed, lost with their node) up to K times (default 1).",
            valueName: "K"))
    var retries = 1

    @Flag(
        name: .customLong("no-wait"),
        help: "Submit and return; cropzoom batch status DIR shows where the batch stands.")
    var noWait = false

    @Option(help: "auto (a status line on a terminal, else none), bar, lines (one line per finished file), none.")
    var progress: StatusStyle = .auto

    @OptionGroup var settings: BatchSettingsOptions

    func validate() throws {
        guard let shards else { throw ValidationError("batch submit needs --shards N (the tasks of the array)") }
        if !(1...1000).contains(shards) {
            throw ValidationError("--shards takes a number from 1 to 1000 (got \(shards))")
        }
        if !(0...100).contains(retries) {
            throw ValidationError("--retries takes a number from 0 to 100 (got \(retries))")
        }
        for option in schedulerOptions where !option.hasPrefix("-") || option.contains("\n") {
            throw ValidationError(
                "--scheduler-option takes one option of sbatch, e.g. --partition=video (got '\(option)')")
        }
        try outputs.refuseExistingReport()
    }

    func run() throws {
        let started = monotonicSeconds()
        let outRoot = files.outRoot
        let (found, protected) = try files.files(overwrite: outputs.overwrite)
        let items = found.map { BatchItem(input: $0.path, output: files.output($0)) }
        try Batch.checkConflicts(
            items, inputs: protected, mayReplace: { _ in outputs.skipExisting || outputs.overwrite },
            renameHint: "change --name or --out-dir", existsHint: "--skip-existing keeps it, -y replaces it")
        _ = try settings.configuration()
        let manifest = BatchManifest(
            created: BatchManifest.now(), command: ["cropzoom"] + ChildProcess.rawArguments(), outDir: outRoot.path,
            shards: shards!, arguments: settings.settings.arguments(), jobs: jobs.jobs,
            skipExisting: outputs.skipExisting, overwrite: outputs.overwrite,
            files: found.map { f in
                let out = files.output(f)
                // Absolute: the tasks may run in another folder (sbatch --chdir) or on another machine.
                var input = f.path
                while input.hasPrefix("./") { input.removeFirst(2) }
                if !input.hasPrefix("/") { input = FileManager.default.currentDirectoryPath + "/" + input }
                return .init(input: input, output: out, scanned: f.scanned, existing: BatchManifest.FileStamp(out))
            })
        let batch = ScheduledBatch(outDir: outRoot.path)
        // From here a Ctrl-C is noted, not fatal: once the array is submitted, the wait cancels it.
        ProcessSignals.install()
        let submission = try batch.submit(manifest, options: schedulerOptions, executable: Bench.executablePath())
        let count = "\(manifest.files.count) file\(manifest.files.count == 1 ? "" : "s")"
        Stderr.write(
            "cropzoom: submitted job \(submission.job): \(count) in \(manifest.shards) shard"
                + "\(manifest.shards == 1 ? "" : "s") (state in \(batch.folder); cropzoom batch status "
                + "\(outRoot.path))\n")
        if noWait {
            // Interrupted while submitting: what was submitted is cancelled.
            if ProcessSignals.pending != 0 {
                Slurm.cancel([submission.job])
                throw ExitCode(128 + ProcessSignals.pending)
            }
            return
        }
        let (merged, signal) = try batch.wait(manifest, retries: retries, style: progress.resolved, started: started)
        Stdout.write(Batch.table(merged.files))
        try Bench.writeAtomically(try merged.json(), to: batch.folder + "/report.json")
        if let report = outputs.report { try Bench.writeAtomically(try merged.json(), to: report) }
        if signal != 0 { throw ExitCode(128 + signal) }
        // (Here a file no shard finished, interrupted or not started, fails the batch too.)
        try Batch.exit(for: merged.files) { !$0.wrote && $0 != .skipped }
    }
}
