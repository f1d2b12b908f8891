import ArgumentParser
import CropZoomKit
import Foundation

// The option groups the batch commands share. Each command takes only the groups it uses: `batch status` none,
// `batch shard` the jobs and the requeue code (its manifest fixes files and settings).

/// The files of a batch and where their outputs go (`batch run`, `watch`, `submit`).
struct BatchFileOptions: ParsableArguments {
    @Argument(
        help: ArgumentHelp(
            "Files, folders (searched recursively; hidden files skipped; links to files followed) or globs "
                + "('clips/*.mov'); batch watch takes folders.",
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

    func validate() throws {
        if inputs.isEmpty { throw ValidationError("no INPUT: name files, folders or globs") }
        if outDir == nil { throw ValidationError("missing --out-dir DIR") }
        if !name.contains("{stem}") && !name.contains("{name}") {
            throw ValidationError("--name \(name) has neither {stem} nor {name}: every file would get the same output")
        }
        if (Batch.outputName(name, input: "x.mp4") as NSString).pathExtension.isEmpty || name.contains("/") {
            throw ValidationError(
                "--name \(name) must give a file name with an extension (it picks the container), without folders")
        }
    }

    /// The output folder, absolute.
    var outRoot: URL { URL(fileURLWithPath: outDir ?? ".").standardized }

    /// Where `file`'s output goes: its sub-folder under the output folder, its name from `--name`.
    func output(_ file: BatchInputs.File) -> String {
        outRoot.appendingPathComponent(file.relativeFolder)
            .appendingPathComponent(Batch.outputName(name, input: file.path)).standardized.path
    }

    /// The files the inputs name now, filtered (`--include`, `--exclude`), sorted, de-duplicated; the output folder
    /// and this batch's own earlier outputs are not inputs (a re-run must not take them).
    func scan() throws -> [BatchInputs.File] {
        BatchInputs.filter(try BatchInputs.resolve(inputs, outDir: outRoot.path), include: include, exclude: exclude)
    }

    /// The batch's files (``scan()`` without this batch's outputs), and the paths no output may replace: with -y
    /// (`overwrite`) an output the scan found may be an original that happens to have that name, so it stays
    /// protected and is refused, never replaced. No file at all is bad usage.
    func files(overwrite: Bool) throws -> (files: [BatchInputs.File], protected: [String]) {
        let scanned = try scan()
        let files = BatchInputs.droppingOutputs(scanned, output: output)
        if files.isEmpty {
            let filtered = include.isEmpty && exclude.isEmpty ? "" : " that --include/--exclude keep"
            throw CommandError.usage("no files in \(inputs.joined(separator: " "))\(filtered)")
        }
        return (files, (overwrite ? scanned : files).map(\.path))
    }
}

/// What becomes of outputs that exist, and the JSON report (`batch run`, `watch`, `submit`).
struct BatchOutputOptions: ParsableArguments {
    @Flag(
        name: .customLong("skip-existing"),
        help: "Leave files whose output exists (a re-run resumes an interrupted batch).")
    var skipExisting = false

    @Flag(
        name: [.customShort("y"), .long], help: "Replace existing outputs (each only once its new file is complete).")
    var overwrite = false

    @Option(help: ArgumentHelp("Also write the results as JSON.", valueName: "FILE.json"))
    var report: String?

    func validate() throws {
        if skipExisting && overwrite {
            throw ValidationError("--skip-existing and -y contradict each other: choose one")
        }
    }

    /// An existing `--report` is replaced only with -y.
    func refuseExistingReport() throws {
        if let report, RawPath.exists(report) && !overwrite {
            throw ValidationError("--report \(report) exists (add -y to replace it)")
        }
    }
}

/// The transcode settings every file of a batch gets (`batch run`, `watch`, `submit`): each file's `transcode`
/// process takes them as arguments.
struct BatchSettingsOptions: ParsableArguments {
    @OptionGroup(title: "Geometry") var geometry: GeometryOptions
    @OptionGroup(title: "Stabilisation") var stabilization: StabilizeOptions
    @OptionGroup(title: "Trim") var trim: TrimOptions
    @OptionGroup(title: "Encoding") var encoding: EncodingOptions
    @OptionGroup(title: "Streams") var streams: StreamOptions

    @Flag(
        name: .setting(.strict),
        help: "Fail a damaged input (truncated, damaged packets) instead of salvaging what it holds (`salvaged`).")
    var strict = false

    @Option(
        name: .setting(.reference),
        help: ArgumentHelp(
            "Every file whose writer crashed before its index is repaired first with this complete recording from "
                + "the same camera and settings (a job file gives one per clip).", valueName: "FILE"))
    var reference: String?

    func validate() throws {
        if encoding.codec == "none" { throw ValidationError("--codec none writes nothing: batch writes files") }
        // A folder (a name ending in /) takes one window path per clip with --follow; a file names one clip's.
        let folder = stabilization.pathOut?.hasSuffix("/") == true && geometry.follow != nil
        if stabilization.pathIn != nil || (stabilization.pathOut != nil && !folder) {
            throw ValidationError(
                "--path-in and --path-out name one clip's path: give them per clip in a job file (or, with --follow, "
                    + "--path-out FOLDER/ for one path per clip)")
        }
    }

    var settings: Settings {
        geometry.settings.merging(stabilization.settings).merging(trim.settings).merging(encoding.settings).merging(
            streams.settings
        )
        .merging(
            Settings([
                .strict: strict ? "true" : nil,
                // Each file's process may run elsewhere (a Slurm node, another folder): the reference by its full path.
                .reference: reference.map { URL(fileURLWithPath: $0).standardizedFileURL.path },
            ]))
    }

    /// The settings as a configuration without input and output: checked before any file starts.
    func configuration() throws -> TranscodeConfiguration {
        do throws(CropZoomError) {
            return try settings.configuration(input: "", output: "")
        } catch {
            throw ValidationError(error.message)
        }
    }
}

/// Files at once (`batch run`, `submit`, `shard`).
struct BatchJobsOption: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Files processed at once (default: one per two cores); the machine's threads are shared between them.",
            valueName: "N"))
    var jobs: Int?

    func validate() throws {
        if let jobs, !(1...256).contains(jobs) {
            throw ValidationError("--jobs takes a number from 1 to 256 (got \(jobs))")
        }
    }
}

/// The exit code a scheduler requeues on (`batch run`, `shard`).
struct RequeueExitOption: ParsableArguments {
    @Option(
        name: .customLong("requeue-exit"),
        help: ArgumentHelp(
            "Exit with CODE instead of 143 when SIGTERM stopped the batch (running files leave nothing behind): a "
                + "scheduler requeues the task on it (Slurm: RequeueExit=75).",
            valueName: "CODE"))
    var requeueExit: Int32?

    func validate() throws {
        if let requeueExit, !(1...255).contains(requeueExit) {
            throw ValidationError("--requeue-exit takes an exit code from 1 to 255 (got \(requeueExit))")
        }
    }
}
