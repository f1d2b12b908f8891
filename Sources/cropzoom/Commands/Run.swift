import ArgumentParser
import CropZoomKit
import Foundation

/// `cropzoom run JOB.json|JOB.yaml`: a list of clips with their own settings, over shared
/// defaults — scripted post-processing without a shell loop. Each clip runs as `batch` runs a
/// file (its own `cropzoom transcode` process), with the same table, report and exit codes.
struct RunJobFile: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract:
            "Run a job file (JSON or YAML): defaults plus a list of clips, each with its own input, output and "
            + "settings.",
        discussion: """
            Exit codes as for batch: 0 all succeeded, 1 some clip failed, 2 the job file or a clip's settings \
            are invalid (nothing started) or --dry-run found a clip that would fail, 130 interrupted.
            """)

    @Argument(
        help: ArgumentHelp(
            "The job file (.json, .yaml or .yml; - reads it from standard input; docs/job-files.md).",
            valueName: "job-file"))
    var jobFile: String

    @Option(help: ArgumentHelp("Clips processed at once (default: one per two cores).", valueName: "N"))
    var jobs: Int?

    @Option(help: ArgumentHelp("Also write the results as JSON.", valueName: "FILE.json"))
    var report: String?

    @Flag(
        name: .customLong("dry-run"),
        help: "Validate and print what each clip would do; run nothing (exit 2 when a clip would fail).")
    var dryRun = false

    @Flag(
        name: .customLong("skip-existing"),
        help: "Leave clips whose output exists (a re-run resumes an interrupted job).")
    var skipExisting = false

    @Flag(name: [.customShort("y"), .long], help: "Replace existing outputs, as `overwrite: true` on every clip.")
    var overwrite = false

    @Option(help: "auto (a status line on a terminal, else none), bar, lines, none.")
    var progress: StatusStyle = .auto

    func validate() throws {
        if skipExisting && overwrite {
            throw ValidationError("--skip-existing and -y contradict each other: choose one")
        }
        if let jobs, !(1...256).contains(jobs) {
            throw ValidationError("--jobs takes a number from 1 to 256 (got \(jobs))")
        }
        if let report, RawPath.exists(report) {
            throw ValidationError("--report \(report) exists (choose another name)")
        }
    }

    func run() throws {
        let job: JobFile
        do throws(CropZoomError) { job = try JobFile.load(jobFile) } catch {
            throw CommandError.usage(error.description)
        }
        let clips = job.clips
        var items = clips.map { BatchItem(input: $0.input, output: $0.output) }
        for (k, clip) in clips.enumerated() where !RawPath.exists(clip.input) {
            items[k].result = .failed
            items[k].error = "\(clip.input): No such file or directory"
            items[k].exitCode = 3
        }
        // Conflicts, as batch refuses them (a clip's `overwrite: true` or -y allows replacing its output).
        var pending = items
        for k in pending.indices { pending[k].result = .pending }
        let mayReplace = { (k: Int) in clips[k].overwrite || overwrite || skipExisting }
        try Batch.checkConflicts(
            pending, inputs: clips.map(\.input), mayReplace: mayReplace,
            prefix: "\(jobFile == "-" ? "stdin" : jobFile): ",
            renameHint: "change an output", existsHint: "set overwrite: true for that clip, or -y")
        // Every clip planned before the first runs: what transcode would refuse (a preset the
        // encoder does not know, a crop larger than the picture, a start past the end) stops the
        // job; an unreadable input fails its clip only.
        var plans: [String?] = Array(repeating: nil, count: clips.count)
        for (k, clip) in clips.enumerated() where items[k].result == .pending {
            if skipExisting && RawPath.exists(clip.output) {
                plans[k] = "\(clip.input): skip (\(clip.output) exists)"
                continue
            }
            do {
                let plan = try TranscodeJob(configuration: clip.configuration).plan()
                plans[k] = Batch.planLine(clip.configuration, plan: plan)
            } catch {
                let message = job.describe(error, clip: clip).description
                if error.kind == .usage && !dryRun { throw CommandError.usage(message) }
                items[k].result = .failed
                items[k].error = error.kind == .usage ? message : error.description
                items[k].exitCode = error.exitCode
            }
        }
        if dryRun {
            for (k, clip) in clips.enumerated() {
                Stdout.write((plans[k] ?? "\(clip.input): would fail: \(items[k].error ?? "")") + "\n")
            }
            let failing = items.filter { $0.result == .failed }.count
            if failing > 0 {
                throw CommandError.usage(
                    "\(jobFile == "-" ? "stdin" : jobFile): \(failing) of \(clips.count) clips would fail")
            }
            return
        }
        for (k, clip) in clips.enumerated() where items[k].result == .pending {
            let dir = URL(fileURLWithPath: clip.output).deletingLastPathComponent()
            do { try RawPath.makeDirectories(dir.path) } catch {
                throw CommandError.usage("\(dir.path): cannot create the output folder: \(error.reason)")
            }
        }
        let (jobCount, threadsPerJob) = Batch.split(requested: jobs, cores: Batch.cores)
        let perClip = clips.map { $0.settings.arguments() + ($0.overwrite && !overwrite ? ["-y"] : []) }
        let runner = BatchRunner(
            executable: Bench.executablePath(), arguments: [], threadsPerJob: threadsPerJob,
            jobs: jobCount, skipExisting: skipExisting, overwrite: overwrite,
            style: progress.resolved, perItemArguments: perClip)
        try Batch.execute(items, runner: runner, report: report, outDir: "", shard: nil)
    }
}
