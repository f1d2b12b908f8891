import ArgumentParser
import CropZoomKit
import Foundation
import Yams

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

    @Argument(help: ArgumentHelp("The job file (.json, .yaml or .yml; README, \"Job files\").", valueName: "job-file"))
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

    /// The settings a clip (or `defaults`) may give, and the transcode option each becomes.
    static let settings: [String: String] = [
        "zoom": "--zoom", "center": "--center", "ease": "--ease", "background": "--background", "crop": "--crop",
        "size": "--size", "rotate": "--rotate", "transform": "--transform",
        "flip": "--flip", "orientation": "--orientation", "scaler": "--scaler", "kernel": "--kernel",
        "deinterlace": "--deinterlace",
        "start": "--start", "end": "--end", "duration": "--duration", "keep_start_time": "--keep-start-time",
        "codec": "--codec", "crf": "--crf", "preset": "--preset", "bitrate": "--bitrate", "pix_fmt": "--pix-fmt",
        "audio": "--audio",
    ]
    static let clipOnly: Set<String> = ["input", "output", "overwrite"]
    /// Settings that are on/off flags (`true`/`false` in the job file).
    static let flags: Set<String> = ["keep_start_time"]

    /// One clip, validated: its input, output, `transcode` arguments and the configuration
    /// they make (what `--dry-run` describes).
    struct Clip {
        /// `clips[I] (INPUT)`, as messages name the clip.
        var label: String
        var input: String
        var output: String
        var arguments: [String]
        var overwrite: Bool
        var configuration: TranscodeConfiguration
    }

    /// Reads and validates a job file. Relative paths are relative to the job file's folder.
    static func load(_ path: String) throws -> [Clip] {
        if RawPath.isDirectory(path) { throw CommandError.usage("\(path): cannot read the job file (it is a folder)") }
        let fd = RawPath.withCString(path) { open($0, O_RDONLY) }
        guard fd >= 0 else {
            throw CommandError.usage("\(path): cannot read the job file (\(String(cString: strerror(errno))))")
        }
        let data = FileHandle(fileDescriptor: fd, closeOnDealloc: true).readDataToEndOfFile()
        // A path that is not UTF-8 written in the file is kept as RawPath keeps it (not replaced by U+FFFD).
        let text = RawPath.string(fromBytes: data)
        let ext = (path as NSString).pathExtension.lowercased()
        let root: Any?
        do {
            if ext == "json" {
                root = try JSONSerialization.jsonObject(with: Data(text.utf8))
            } else if ext == "yaml" || ext == "yml" {
                root = try Yams.load(yaml: text)
            } else {
                throw CommandError.usage("\(path): a job file is .json, .yaml or .yml")
            }
        } catch let e as CommandError {
            throw e
        } catch {
            let reason = "\(error)".split(separator: "\n").first.map(String.init) ?? "\(error)"
            throw CommandError.usage("\(path): not valid \(ext == "json" ? "JSON" : "YAML"): \(reason)")
        }
        guard let top = root as? [String: Any] else {
            throw CommandError.usage("\(path): the top level must be a mapping with `clips` (and optional `defaults`)")
        }
        for key in top.keys where !["defaults", "clips"].contains(key) {
            throw CommandError.usage("\(path): unknown top-level field '\(key)' (expected defaults, clips)")
        }
        let defaults =
            try (top["defaults"]).map { value -> [String: Any] in
                guard let d = value as? [String: Any] else {
                    throw CommandError.usage("\(path): defaults: must be a mapping")
                }
                return d
            } ?? [:]
        for key in defaults.keys where settings[key] == nil {
            throw CommandError.usage(
                "\(path): defaults: unknown field '\(key)'\(clipOnly.contains(key) ? " (only a clip can give it)" : "")"
            )
        }
        guard let list = top["clips"] as? [Any], !list.isEmpty else {
            throw CommandError.usage("\(path): clips: must be a non-empty list")
        }
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
        func resolve(_ p: String) -> String {
            p.hasPrefix("/") || p == "-" ? p : folder.appendingPathComponent(p).standardized.path
        }

        var clips: [Clip] = []
        for (i, item) in list.enumerated() {
            guard let clip = item as? [String: Any] else {
                throw CommandError.usage("\(path): clips[\(i)]: must be a mapping")
            }
            let label = "clips[\(i)]\((clip["input"] as? String).map { " (\($0))" } ?? "")"
            func fail(_ field: String, _ why: String) -> CommandError {
                CommandError.usage("\(path): \(label): \(field): \(why)")
            }
            for key in clip.keys where settings[key] == nil && !clipOnly.contains(key) {
                throw fail(key, "unknown field")
            }
            guard let input = clip["input"] as? String, !input.isEmpty else { throw fail("input", "missing (a path)") }
            guard let output = clip["output"] as? String, !output.isEmpty else {
                throw fail("output", "missing (a path)")
            }
            var overwrite = false
            if let o = clip["overwrite"] {
                guard let b = o as? Bool else { throw fail("overwrite", "must be true or false") }
                overwrite = b
            }
            var merged = defaults
            for (k, v) in clip where settings[k] != nil { merged[k] = v }
            var args: [String] = []
            for key in merged.keys.sorted() {
                let value = merged[key]!
                if flags.contains(key) {
                    guard let on = value as? Bool else { throw fail(key, "must be true or false") }
                    if on { args.append(settings[key]!) }
                    continue
                }
                let text: String
                switch value {
                case let s as String: text = s
                case let b as Bool: throw fail(key, "must be a number or text, not \(b)")
                case let n as NSNumber: text = n.stringValue
                case let a as [Any] where (key == "center" && a.count == 2) || (key == "transform" && a.count == 6):
                    text = a.map { ($0 as? NSNumber)?.stringValue ?? "\($0)" }.joined(separator: ",")
                default: throw fail(key, "must be a number or text")
                }
                // --option=value: a value starting with "-" (a negative number) stays a value.
                args.append("\(settings[key]!)=\(text)")
            }
            // The transcode command's own validation, with its message tied to the clip and field.
            let configuration: TranscodeConfiguration
            do {
                configuration = try Transcode.parse([resolve(input), "-o", resolve(output)] + args).configuration()
            } catch {
                let message = Transcode.message(for: error).split(separator: "\n").first.map(String.init) ?? "invalid"
                throw fail(field(of: message), message)
            }
            clips.append(
                Clip(
                    label: label, input: resolve(input), output: resolve(output), arguments: args,
                    overwrite: overwrite, configuration: configuration))
        }
        return clips
    }

    /// The field a `transcode` message is about: the setting whose option it names first.
    static func field(of message: String) -> String {
        let named = settings.compactMap { k, v in
            message.range(of: v + " ").map { (k, $0.lowerBound) } ?? message.range(of: v).map { (k, $0.lowerBound) }
        }
        return named.min { $0.1 < $1.1 }?.0 ?? "settings"
    }

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
        let clips = try RunJobFile.load(jobFile)
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
            pending, inputs: clips.map(\.input), mayReplace: mayReplace, prefix: "\(jobFile): ",
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
                let field = RunJobFile.field(of: error.description)
                let message = "\(jobFile): \(clip.label): \(field): \(error.description)"
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
            if failing > 0 { throw CommandError.usage("\(jobFile): \(failing) of \(clips.count) clips would fail") }
            return
        }
        for (k, clip) in clips.enumerated() where items[k].result == .pending {
            let dir = URL(fileURLWithPath: clip.output).deletingLastPathComponent()
            do { try RawPath.makeDirectories(dir.path) } catch {
                throw CommandError.usage("\(dir.path): cannot create the output folder: \(error.reason)")
            }
        }
        let (jobCount, threadsPerJob) = Batch.split(requested: jobs, cores: Batch.cores)
        let perClip = clips.map { $0.arguments + ($0.overwrite && !overwrite ? ["-y"] : []) }
        let runner = BatchRunner(
            executable: Bench.executablePath(), arguments: [], threadsPerJob: threadsPerJob,
            jobs: jobCount, skipExisting: skipExisting, overwrite: overwrite,
            style: progress.resolved, perItemArguments: perClip)
        try Batch.execute(items, runner: runner, report: report, outDir: "", shard: nil)
    }
}
