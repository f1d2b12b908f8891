import ArgumentParser
import CropZoomKit
import Foundation

/// `cropzoom batch`: many inputs, one output folder, N files at a time. Each file is its own
/// `cropzoom transcode` process (a file that crashes a decoder cannot take the batch with it),
/// with the machine's threads shared between the files that run at once.
struct Batch: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Transcode many files (files, folders, globs) into one output folder, several at a time.",
        discussion: """
            Exit codes: 0 every file succeeded (or was skipped), 1 some file failed (or, on a scheduler, was \
            never done), 2 bad usage (nothing was started), 130 interrupted (SIGINT; 143 SIGTERM, or \
            --requeue-exit's code): running files are stopped and leave nothing behind, no new file starts, the \
            table so far is printed. With --scheduler slurm the same, for the whole batch: Ctrl-C cancels its jobs.
            """)

    @Argument(
        help: ArgumentHelp(
            "Files, folders (searched recursively; hidden files skipped; links to files followed) or globs "
                + "('clips/*.mov').",
            valueName: "input"))
    var inputs: [String] = []

    @Option(
        name: .customLong("out-dir"),
        help: ArgumentHelp(
            "Folder for the outputs (created if missing); folder inputs keep their sub-folders under it.",
            valueName: "DIR"))
    var outDir: String?

    @Option(
        help: ArgumentHelp(
            "Output file name: {stem} (input name without extension), {ext} (its extension), {name} (whole input "
                + "name). The extension picks the container.",
            valueName: "TEMPLATE"))
    var name = "{stem}-zoom.{ext}"

    @Option(
        help: ArgumentHelp(
            "Files processed at once (default: one per two cores); the machine's threads are shared between them.",
            valueName: "N"))
    var jobs: Int?

    @Flag(
        name: .customLong("skip-existing"),
        help: "Leave files whose output exists (a re-run resumes an interrupted batch).")
    var skipExisting = false

    @Flag(
        name: [.customShort("y"), .long], help: "Replace existing outputs (each only once its new file is complete).")
    var overwrite = false

    @Option(help: ArgumentHelp("Also write the results as JSON.", valueName: "FILE.json"))
    var report: String?

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

    @Option(help: "Run the batch on a scheduler: none (here, the default) or slurm (a job array of --shards tasks).")
    var scheduler: SchedulerKind = .none

    @Option(
        help: ArgumentHelp(
            "Number of shards: the tasks of the --scheduler's array; with --shard auto, the count when the "
                + "scheduler does not give it.",
            valueName: "N"))
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
            "With --scheduler: resubmit the shards that did not finish (killed, lost with their node) up to K times "
                + "(default 1).",
            valueName: "K"))
    var retries = 1

    @Flag(
        name: .customLong("no-wait"),
        help: "With --scheduler: submit and return; cropzoom batch --status DIR shows where the batch stands.")
    var noWait = false

    @Option(
        help: ArgumentHelp(
            "Where a batch submitted into DIR stands: each shard's files done, its place in the queue.",
            valueName: "DIR"))
    var status: String?

    @Option(
        help: ArgumentHelp(
            "Run a shard (--shard) of the batch this manifest fixes (what the scheduler's job script runs).",
            valueName: "FILE"))
    var manifest: String?

    @Option(
        name: .customLong("requeue-exit"),
        help: ArgumentHelp(
            "Exit with CODE instead of 143 when SIGTERM stopped the batch (running files leave nothing behind): a "
                + "scheduler requeues the task on it (Slurm: RequeueExit=75).",
            valueName: "CODE"))
    var requeueExit: Int32?

    @Option(help: "auto (a status line on a terminal, else none), bar, lines (one line per finished file), none.")
    var progress: StatusStyle = .auto

    @Option(
        help: ArgumentHelp(
            """
            Take only files that match (repeatable; fnmatch, case-insensitive): a pattern with '/' matches the path \
            under the scanned folder, one without matches the file name.
            """, valueName: "GLOB"))
    var include: [String] = []

    @Option(
        help: ArgumentHelp(
            "Leave out files that match (repeatable; same matching as --include).",
            valueName: "GLOB"))
    var exclude: [String] = []

    @Flag(
        help: ArgumentHelp(
            "Watch the folders: transcode each media file once it is complete (its size unchanged for 2 s, no "
                + "process writing it, and it reads as a whole media file), files already there first; a file that "
                + "failed is tried again when it changes; Ctrl-C or SIGTERM ends the watch (exit 0, 1 when a file "
                + "failed, 4 when one was salvaged)."))
    var watch = false

    @Option(
        help: ArgumentHelp(
            "With --watch: take a file that does not read as whole media once it has been unchanged this long "
                + "(default 30).",
            valueName: "SECONDS"))
    var settle: Double?

    @OptionGroup(title: "Geometry") var geometry: GeometryOptions
    @OptionGroup(title: "Trim") var trim: TrimOptions
    @OptionGroup(title: "Encoding") var encoding: EncodingOptions
    @OptionGroup(title: "Streams") var streams: StreamOptions

    @Flag(
        name: .setting(.strict),
        help: "Fail a damaged input (truncated, damaged packets) instead of salvaging what it holds (`salvaged`).")
    var strict = false

    /// The CPUs this process may use (affinity, cgroup quota), and in a Slurm job no more than Slurm gave it
    /// (SLURM_CPUS_ON_NODE: a cluster without task binding leaves every CPU visible).
    static var cores: Int {
        let slurm = ProcessInfo.processInfo.environment["SLURM_CPUS_ON_NODE"].flatMap { Int($0) } ?? Int.max
        return max(1, min(UsableCPUs.count, slurm))
    }

    /// "I/N" → (I, N), 1 ≤ I ≤ N.
    static func parseShard(_ text: String) throws -> (index: Int, count: Int) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let i = Int(parts[0]), let n = Int(parts[1]), n >= 1, (1...n).contains(i) else {
            throw ValidationError("--shard takes I/N with 1 ≤ I ≤ N, e.g. 2/4 (got '\(text)')")
        }
        return (i, n)
    }

    /// The shard's part of `paths` (sorted by path first): positions I-1, I-1+N, I-1+2N, …
    static func select<T>(_ items: [T], path: (T) -> String, shard: (index: Int, count: Int)?) -> [T] {
        let sorted = items.sorted { path($0) < path($1) }
        guard let shard else { return sorted }
        return sorted.enumerated().filter { $0.offset % shard.count == shard.index - 1 }.map(\.element)
    }

    /// Default files at once: one per two cores (each with two threads: the thread plan's best
    /// per-file efficiency, Benchmarks/README.md "Batch"), at least one.
    static func defaultJobs(cores: Int) -> Int { max(1, cores / 2) }

    /// The output name for `input` from `template`.
    static func outputName(_ template: String, input: String) -> String {
        let file = (input as NSString).lastPathComponent
        let ext = (file as NSString).pathExtension
        let stem = ext.isEmpty ? file : String(file.dropLast(ext.count + 1))
        return template.replacingOccurrences(of: "{stem}", with: stem)
            .replacingOccurrences(of: "{ext}", with: ext)
            .replacingOccurrences(of: "{name}", with: file)
    }

    func validate() throws {
        if let jobs, !(1...256).contains(jobs) {
            throw ValidationError("--jobs takes a number from 1 to 256 (got \(jobs))")
        }
        if let shards, !(1...1000).contains(shards) {
            throw ValidationError("--shards takes a number from 1 to 1000 (got \(shards))")
        }
        if let requeueExit, !(1...255).contains(requeueExit) {
            throw ValidationError("--requeue-exit takes an exit code from 1 to 255 (got \(requeueExit))")
        }
        if !(0...100).contains(retries) {
            throw ValidationError("--retries takes a number from 0 to 100 (got \(retries))")
        }
        if let status {
            if !inputs.isEmpty || outDir != nil || manifest != nil {
                throw ValidationError("--status \(status) shows a submitted batch: no INPUT, --out-dir or --manifest")
            }
            return
        }
        if let manifest {
            if !inputs.isEmpty || outDir != nil || !settings.arguments().isEmpty || skipExisting || overwrite {
                throw ValidationError(
                    "--manifest \(manifest) fixes the inputs, the output folder and the settings: no INPUT, --out-dir, "
                        + "-y, --skip-existing or settings")
            }
            if shard == nil { throw ValidationError("--manifest runs one shard: add --shard I/N or --shard auto") }
            if scheduler != .none || watch || dryRun {
                throw ValidationError("--manifest runs one shard here: not with --scheduler, --watch or --dry-run")
            }
            return
        }
        if inputs.isEmpty { throw ValidationError("no INPUT: name files, folders or globs") }
        if outDir == nil { throw ValidationError("missing --out-dir DIR") }
        if scheduler != .none {
            if shards == nil { throw ValidationError("--scheduler \(scheduler.rawValue) needs --shards N") }
            if shard != nil || watch || dryRun {
                throw ValidationError(
                    "--scheduler \(scheduler.rawValue) runs every shard: not with --shard, --watch or --dry-run")
            }
            for option in schedulerOptions where !option.hasPrefix("-") || option.contains("\n") {
                throw ValidationError(
                    "--scheduler-option takes one option of sbatch, e.g. --partition=video (got '\(option)')")
            }
        } else {
            if shards != nil && shard != "auto" {
                throw ValidationError("--shards N is for --scheduler slurm or --shard auto")
            }
            if !schedulerOptions.isEmpty || noWait {
                throw ValidationError("--scheduler-option and --no-wait are for --scheduler slurm")
            }
        }
        if let shard, shard != "auto" { _ = try Batch.parseShard(shard) }
        if skipExisting && overwrite {
            throw ValidationError("--skip-existing and -y contradict each other: choose one")
        }
        if !name.contains("{stem}") && !name.contains("{name}") {
            throw ValidationError("--name \(name) has neither {stem} nor {name}: every file would get the same output")
        }
        if (Batch.outputName(name, input: "x.mp4") as NSString).pathExtension.isEmpty || name.contains("/") {
            throw ValidationError(
                "--name \(name) must give a file name with an extension (it picks the container), without folders")
        }
        // A shard's own earlier report may be replaced (checked in `run`, once the shard is known).
        if let report, RawPath.exists(report) && !overwrite && shard == nil {
            throw ValidationError("--report \(report) exists (add -y to replace it)")
        }
        if encoding.codec == "none" { throw ValidationError("--codec none writes nothing: batch writes files") }
        if watch {
            if dryRun || shard != nil {
                throw ValidationError("--watch runs until stopped: not with --dry-run or --shard")
            }
            for input in inputs where !RawPath.isDirectory(input) {
                throw ValidationError("--watch watches folders: \(input) is not one")
            }
        }
        if let settle, !(settle >= 0 && settle.isFinite) {
            throw ValidationError("--settle takes seconds ≥ 0 (got \(settle))")
        }
        if settle != nil && !watch { throw ValidationError("--settle is for --watch") }
    }

    func run() throws {
        if let status {
            try BatchStatus.show(outDir: status)
            return
        }
        if let manifest {
            try runShard(manifest: manifest)
            return
        }
        let (jobCount, threadsPerJob) = Batch.split(requested: jobs, cores: Batch.cores)
        let outRoot = URL(fileURLWithPath: outDir!).standardized

        // 1. Inputs: files, folders, globs → filtered, sorted, de-duplicated, sharded. The output
        // folder and this batch's own earlier outputs are not inputs (a re-run must not take them).
        let output = { (f: BatchInputs.File) in
            outRoot.appendingPathComponent(f.relativeFolder)
                .appendingPathComponent(Batch.outputName(name, input: f.path)).standardized.path
        }
        if watch {
            try runWatch(output: output, outRoot: outRoot)
            return
        }
        var found = try BatchInputs.resolve(inputs, outDir: outRoot.path)
        found = BatchInputs.filter(found, include: include, exclude: exclude)
        let scanned = found
        found = BatchInputs.droppingOutputs(found, output: output)
        // With -y an output that the scan found may be an original that happens to have that
        // name: it stays an input for the conflict check, so it is refused, never replaced.
        let protected = overwrite ? scanned.map(\.path) : found.map(\.path)
        if found.isEmpty {
            let filtered = include.isEmpty && exclude.isEmpty ? "" : " that --include/--exclude keep"
            throw CommandError.usage("no files in \(inputs.joined(separator: " "))\(filtered)")
        }
        if scheduler == .slurm {
            try submit(found, output: output, protected: protected, outRoot: outRoot)
            return
        }
        let environment = ProcessInfo.processInfo.environment
        let shardSpec = try shard.map { try ShardIndex.resolve($0, count: shards, environment: environment) }
        let shard = shardSpec.map { "\($0.index)/\($0.count)" }
        if let report, RawPath.exists(report) && !overwrite {
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
        for f in found { items.append(Batch.probed(BatchItem(input: f.path, output: output(f)), scanned: f.scanned)) }
        try Batch.checkConflicts(
            items, inputs: protected, mayReplace: { _ in skipExisting || overwrite },
            renameHint: "change --name or --out-dir", existsHint: "--skip-existing keeps it, -y replaces it")

        // 3. Dry run: the plan of each file.
        let base = try transcodeConfiguration()
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
        let args = settings.arguments()
        let runner = BatchRunner(
            executable: Bench.executablePath(), arguments: args, threadsPerJob: threadsPerJob,
            jobs: jobCount, skipExisting: skipExisting, overwrite: overwrite, style: progress.resolved)
        try Batch.execute(
            items, runner: runner, report: report, outDir: outRoot.path, shard: shard, requeueExit: requeueExit)
    }

    /// `--scheduler slurm`: the manifest of `found` (each file's output; with -y or --skip-existing, the outputs there
    /// now), the state folder and the job script, submitted as an array of `--shards` tasks; then the wait, unless
    /// `--no-wait`, and the merged table and report, with a local batch's exit codes.
    func submit(
        _ found: [BatchInputs.File], output: (BatchInputs.File) -> String, protected: [String], outRoot: URL
    ) throws {
        let started = monotonicSeconds()
        let items = found.map { BatchItem(input: $0.path, output: output($0)) }
        try Batch.checkConflicts(
            items, inputs: protected, mayReplace: { _ in skipExisting || overwrite },
            renameHint: "change --name or --out-dir", existsHint: "--skip-existing keeps it, -y replaces it")
        _ = try transcodeConfiguration()
        let manifest = BatchManifest(
            created: BatchManifest.now(), command: ["cropzoom"] + ChildProcess.rawArguments(), outDir: outRoot.path,
            shards: shards!, arguments: settings.arguments(), jobs: jobs, skipExisting: skipExisting,
            overwrite: overwrite,
            files: found.map { f in
                let out = output(f)
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
        let files = "\(manifest.files.count) file\(manifest.files.count == 1 ? "" : "s")"
        Stderr.write(
            "cropzoom: submitted job \(submission.job): \(files) in \(manifest.shards) shard"
                + "\(manifest.shards == 1 ? "" : "s") (state in \(batch.folder); cropzoom batch --status "
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
        if let report { try Bench.writeAtomically(try merged.json(), to: report) }
        if signal != 0 { throw ExitCode(128 + signal) }
        // (Here a file no shard finished, interrupted or not started, fails the batch too.)
        try Batch.exit(for: merged.files) { !$0.wrote && $0 != .skipped }
    }

    /// `--manifest FILE --shard I/N|auto`: one shard of a submitted batch, as the job script runs it. Its files are
    /// those of the manifest; one whose output this batch already wrote (an earlier run of the shard) is not done
    /// again. The shard's report (beside the manifest, `reports/shard-I.json`, or `--report`) is rewritten after
    /// each file and at the end, whole each time: `finished` says whether the shard went through its list.
    func runShard(manifest path: String) throws {
        let manifest = try BatchManifest.read(path)
        if let shards, shards != manifest.shards {
            throw CommandError.usage("--shards \(shards): the batch of \(path) has \(manifest.shards) shards")
        }
        let spec: (index: Int, count: Int)
        do {
            spec = try ShardIndex.resolve(
                shard!, count: manifest.shards, environment: ProcessInfo.processInfo.environment)
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
        let (jobCount, threadsPerJob) = Batch.split(requested: jobs ?? manifest.jobs, cores: Batch.cores)
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
            items, runner: runner, report: reportPath, outDir: outDir, shard: shard, requeueExit: requeueExit)
    }

    /// `--watch` (`BatchWatch`): scans the folders every second and transcodes each file once it is complete, one at
    /// a time with every thread, until a signal ends the watch; then the table and the report.
    func runWatch(output: (BatchInputs.File) -> String, outRoot: URL) throws {
        _ = try transcodeConfiguration()  // the settings are checked before the watch starts
        ProcessSignals.install()
        let runner = BatchRunner(
            executable: Bench.executablePath(), arguments: settings.arguments(), threadsPerJob: Batch.cores,
            jobs: 1, skipExisting: skipExisting, overwrite: overwrite, style: progress.resolved)
        Stderr.write("cropzoom: watching \(inputs.joined(separator: ", ")) (Ctrl-C ends the watch)\n")
        let started = monotonicSeconds()
        var seen: [String: BatchWatch.Seen] = [:]
        var taken = Set<String>()
        // Files that failed, as they were when taken: one that changes since is tried again.
        var failedAs: [String: BatchWatch.Seen] = [:]
        var done: [BatchItem] = []
        while ProcessSignals.pending == 0 {
            for (path, before) in failedAs {
                guard let now = BatchWatch.look(path), !now.sameFile(as: before) else { continue }
                failedAs[path] = nil
                taken.remove(path)
                Stderr.write("cropzoom: \(path) changed since it failed: trying it again once it is complete\n")
            }
            var found = (try? BatchInputs.resolve(inputs, outDir: outRoot.path)) ?? []
            found = BatchInputs.droppingOutputs(
                BatchInputs.filter(found, include: include, exclude: exclude), output: output)
            let byPath = Dictionary(found.map { ($0.path, $0) }, uniquingKeysWith: { a, _ in a })
            let fresh = found.map(\.path).filter { !taken.contains($0) }
            for path in BatchWatch.complete(fresh, seen: &seen, settle: settle ?? BatchWatch.defaultSettle) {
                guard let file = byPath[path], ProcessSignals.pending == 0 else { break }
                taken.insert(path)
                let takenAs = BatchWatch.look(path)
                var item = Batch.probed(BatchItem(input: path, output: output(file)), scanned: true)
                if item.result == .pending && RawPath.exists(item.output) && !skipExisting && !overwrite {
                    item.result = .failed
                    item.error = "\(item.output): already exists (--skip-existing keeps it, -y replaces it)"
                    item.exitCode = 2
                }
                if item.result == .pending {
                    let dir = URL(fileURLWithPath: item.output).deletingLastPathComponent().path
                    do { try RawPath.makeDirectories(dir) } catch {
                        item.result = .failed
                        item.error = "\(dir): cannot create the output folder: \(error.reason)"
                    }
                }
                if item.result == .pending { item = runner.run([item])[0] }
                if item.result == .skipped || item.result == .failed || item.result == .salvaged {
                    Stderr.write(
                        "cropzoom: \(item.result.rawValue) \(path): \(item.reason ?? item.error ?? item.warning ?? "")\n"
                    )
                }
                if item.result == .failed, item.exitCode != 2, let takenAs { failedAs[path] = takenAs }
                // A file tried again replaces its earlier result in the table and the report.
                done.removeAll { $0.input == item.input }
                done.append(item)
            }
            for _ in 0..<Int(BatchWatch.interval * 10) where ProcessSignals.pending == 0 { usleep(100_000) }
        }
        Stdout.write(Batch.table(done))
        if let report {
            try Bench.writeAtomically(
                try Batch.reportJSON(
                    done, outDir: outRoot.path, jobs: 1, threadsPerJob: Batch.cores, shard: nil,
                    seconds: monotonicSeconds() - started, interrupted: false), to: report)
        }
        try Batch.exit(for: done)
    }

    /// `item` after a look at its input (`MediaProbe.probe`, streams only): a file found by scanning (`scanned`)
    /// that is not media or has no video is skipped with the reason; one named directly fails; what cannot be
    /// read fails with its error.
    static func probed(_ item: BatchItem, scanned: Bool) -> BatchItem {
        var item = item
        do {
            let info = try MediaProbe.probe(item.input, frameRate: false)
            if !info.hasVideo && scanned {
                item.result = .skipped
                item.reason = "no video stream"
            } else if !info.hasVideo {
                item.result = .failed
                item.error = "\(item.input): no video stream"
                item.exitCode = 3
            }
        } catch  where scanned && error.kind == .inputUnreadable && error.reason.hasPrefix("not a media file") {
            item.result = .skipped
            item.reason = "not a media file"
        } catch {
            item.result = .failed
            item.error = error.message
            item.exitCode = error.exitCode
        }
        return item
    }

    /// Files at once and threads per file on `cores` cores: `requested` (at most one file per
    /// core: a larger request is capped, with a note) or the default.
    static func split(requested: Int?, cores: Int) -> (jobs: Int, threadsPerJob: Int) {
        var jobs = requested ?? defaultJobs(cores: cores)
        if jobs > cores {
            Stderr.write("cropzoom: note: --jobs \(jobs) is more than the \(cores) cores: running \(cores) at once\n")
            jobs = cores
        }
        return (jobs, max(1, cores / jobs))
    }

    /// What `batch` and `run` share once the items are known: runs the pending ones (signals
    /// passed on to running files), prints the table, writes the report; exits 128+signal when
    /// interrupted, 1 when an item failed.
    static func execute(
        _ items: [BatchItem], runner: BatchRunner, report: String?, outDir: String, shard: String?,
        requeueExit: Int32? = nil
    ) throws {
        ProcessSignals.install()
        let started = monotonicSeconds()
        let done = runner.run(items)
        let seconds = monotonicSeconds() - started
        let signal = ProcessSignals.pending
        Stdout.write(table(done))
        if let report {
            try Bench.writeAtomically(
                try reportJSON(
                    done, outDir: outDir, jobs: runner.jobs, threadsPerJob: runner.threadsPerJob,
                    shard: shard, seconds: seconds, interrupted: signal != 0), to: report)
        }
        if signal == SIGTERM, let requeueExit { throw ExitCode(requeueExit) }
        if signal != 0 { throw ExitCode(128 + signal) }
        try exit(for: done)
    }

    /// Exit code 4 when nothing failed but some inputs were damaged (`salvaged`: their outputs hold what could be
    /// read), so that a script can tell it from a clean batch.
    static let damagedExit: Int32 = 4

    /// A finished batch's exit: 1 when a file's result `fails`, else 4 when one was salvaged, else 0.
    static func exit(for items: [BatchItem], fails: (BatchItem.Result) -> Bool = { $0 == .failed }) throws {
        if items.contains(where: { fails($0.result) }) { throw ExitCode(1) }
        if items.contains(where: { $0.result == .salvaged }) { throw ExitCode(damagedExit) }
    }

    /// The transcode settings every file shares (input and output set per file).
    /// The settings every file gets (each file's `transcode` run takes them as arguments).
    var settings: Settings {
        geometry.settings.merging(trim.settings).merging(encoding.settings).merging(streams.settings)
            .merging(Settings([.strict: strict ? "true" : nil]))
    }

    func transcodeConfiguration() throws -> TranscodeConfiguration {
        do throws(CropZoomError) {
            return try settings.configuration(input: "", output: "")
        } catch {
            throw ValidationError(error.message)
        }
    }

    /// Refuses, before any work (batch and job files alike): two inputs with one output, an
    /// output that is an input, an existing output the item may not replace (`mayReplace`).
    /// Messages start with `prefix` and end with the hints that say how to resolve them.
    static func checkConflicts(
        _ items: [BatchItem], inputs: [String], mayReplace: (Int) -> Bool, prefix: String = "",
        renameHint: String, existsHint: String
    ) throws {
        var owner: [String: String] = [:]
        for (k, item) in items.enumerated() where item.result == .pending {
            if let other = owner[item.output] {
                throw CommandError.usage(
                    "\(prefix)\(other) and \(item.input) would both be written to \(item.output) (\(renameHint))")
            }
            owner[item.output] = item.input
            if inputs.contains(where: { FileIdentity.same($0, item.output) }) {
                throw CommandError.usage(
                    "\(prefix)\(item.output) is an input: an output never replaces an input (\(renameHint))")
            }
            if !mayReplace(k) && RawPath.exists(item.output) {
                throw CommandError.usage("\(prefix)\(item.output) already exists (\(existsHint))")
            }
        }
    }

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
