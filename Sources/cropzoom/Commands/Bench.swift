import ArgumentParser
import CropZoomKit
import Foundation

/// `cropzoom bench`: how fast a job runs on this machine, how it scales with cores and where the
/// time goes. Every run is its own `cropzoom transcode` process (so peak RSS and CPU are the
/// run's own, start-up included, as a user's run would pay), measured from outside with
/// `wait4`; the stage timings come from the run's `--stats`.
struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure a job's throughput on this machine at each thread count, and where the time goes.",
        discussion: """
            Each run is a separate `cropzoom transcode` process writing to the null sink (unless \
            --write), after one warm-up run. Thread counts run in alternation, repeated --repeat \
            times; with --compare-ffmpeg the equivalent ffmpeg command runs after each cropzoom run. \
            Exit codes as for transcode: 0 ok, 1 a run failed, 2 bad usage, 3 input unreadable, 130 interrupted.
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable { case table, json, csv }

    /// The clip `bench` measures when no INPUT is given.
    static let bundledSample = "bench-720p.mp4"

    @Argument(
        help: ArgumentHelp(
            "The clip to measure (default: the bundled sample samples/\(Bench.bundledSample)).", valueName: "input"))
    var input: String?

    @OptionGroup(title: "Geometry") var geometry: GeometryOptions
    @OptionGroup(title: "Encoding") var encoding: EncodingOptions
    @OptionGroup(title: "Streams") var streams: StreamOptions

    @Option(
        name: .customLong("threads"),
        help: ArgumentHelp(
            "Thread counts to measure: a list (1,2,4), a range (1..8) or 1..N (N: this machine's cores). Default: "
                + "1, powers of two, and all cores.",
            valueName: "LIST"))
    var threadList: String?

    @Option(help: ArgumentHelp("Video frames per run (default: the whole clip).", valueName: "N"))
    var frames: Int?

    @Option(
        name: .customLong("repeat"),
        help: ArgumentHelp("Runs per thread count (median, min and max are reported).", valueName: "K"))
    var repeats: Int = 3

    @Option(help: "Output on stdout: table (for people), json or csv (for scripts; schema in docs/probe-and-bench.md).")
    var format: Format = .table

    @Option(
        help: ArgumentHelp(
            "Also write an SVG chart of fps and efficiency against the thread count.", valueName: "FILE.svg"))
    var chart: String?

    @Flag(
        name: .customLong("compare-ffmpeg"),
        help: ArgumentHelp(
            "Run the equivalent ffmpeg command (printed) in alternation with cropzoom; --compare-ffmpeg=PATH or "
                + "--ffmpeg PATH picks the binary."
        ))
    var compareFFmpeg = false

    @Option(
        name: .customLong("ffmpeg"),
        help: ArgumentHelp("The ffmpeg binary to compare with (default: ffmpeg on PATH).", valueName: "PATH"))
    var ffmpegPath: String?

    @Flag(help: "Write each run's output to a temporary file (removed after the run) instead of the null sink.")
    var write = false

    @Option(help: "auto (a progress line on a terminal, else none), bar, lines (one line per update), none.")
    var progress: StatusStyle = .auto

    @Flag(name: [.customShort("y"), .long], help: "Replace the --chart file if it exists.")
    var overwrite = false

    /// The cores this machine gives the process.
    static var cores: Int { UsableCPUs.count }

    /// Parses `--threads`: "1,2,4", "2..8", "1..N" (N = cores) or one number. Sorted, no repeats.
    static func parseThreads(_ text: String, cores: Int) throws -> [Int] {
        func number(_ s: Substring) throws -> Int {
            let t = s.trimmingCharacters(in: .whitespaces)
            if t == "N" || t == "n" { return cores }
            guard let v = Int(t) else {
                throw ValidationError("--threads: '\(t)' is not a number (use a list like 1,2,4 or a range like 1..N)")
            }
            guard (1...256).contains(v) else { throw ValidationError("--threads: \(v) is outside 1...256") }
            return v
        }
        var values: [Int] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            if let r = part.range(of: "..") {
                let lo = try number(part[..<r.lowerBound])
                let hi = try number(part[r.upperBound...])
                guard lo <= hi else { throw ValidationError("--threads: the range \(part) is empty") }
                values += Array(lo...hi)
            } else {
                values.append(try number(part))
            }
        }
        guard !values.isEmpty else { throw ValidationError("--threads: no thread count given") }
        return Array(Set(values)).sorted()
    }

    /// 1, the powers of two below `cores`, and `cores`.
    static func defaultThreads(cores: Int) -> [Int] {
        var v = [1]
        var p = 2
        while p < cores {
            v.append(p)
            p *= 2
        }
        if cores > 1 { v.append(cores) }
        return v
    }

    /// Rewrites `--compare-ffmpeg=PATH`, and `--compare-ffmpeg PATH` where PATH is an executable
    /// file named like ffmpeg, to `--compare-ffmpeg --ffmpeg PATH` (ArgumentParser has no optional-value options).
    static func normalize(_ arguments: [String]) -> [String] {
        var out: [String] = []
        var i = 0
        while i < arguments.count {
            let a = arguments[i]
            if a.hasPrefix("--compare-ffmpeg=") {
                out += ["--compare-ffmpeg", "--ffmpeg", String(a.dropFirst("--compare-ffmpeg=".count))]
            } else if a == "--compare-ffmpeg", i + 1 < arguments.count, ChildProcess.isExecutableFile(arguments[i + 1]),
                (arguments[i + 1] as NSString).lastPathComponent.lowercased().contains("ffmpeg")
            {
                // Only a binary named like ffmpeg: an INPUT that happens to be executable stays the input.
                out += ["--compare-ffmpeg", "--ffmpeg", arguments[i + 1]]
                i += 1
            } else {
                out.append(a)
            }
            i += 1
        }
        return out
    }

    /// Where the bundled sample is: $CROPZOOM_SAMPLES, an installed build's
    /// <prefix>/share/cropzoom/samples, the package's samples/ above a development build
    /// (.build/<triple>/<config>/cropzoom), or ./samples.
    static func findBundledSample() -> String? {
        var folders: [String] = []
        if let env = ProcessInfo.processInfo.environment["CROPZOOM_SAMPLES"] { folders.append(env) }
        // The build folder (.build/release is a link to .build/<triple>/release): the package
        // root's samples/ is a few levels up.
        var dir = URL(fileURLWithPath: executablePath()).resolvingSymlinksInPath().deletingLastPathComponent()
        folders.append(dir.appendingPathComponent("../share/cropzoom/samples").standardized.path)
        for _ in 0..<4 {
            dir = dir.deletingLastPathComponent()
            folders.append(dir.appendingPathComponent("samples").path)
        }
        folders.append(FileManager.default.currentDirectoryPath + "/samples")
        return folders.map { $0 + "/" + bundledSample }.first { FileManager.default.fileExists(atPath: $0) }
    }

    /// This executable (`/proc/self/exe`), which every run re-executes.
    static func executablePath() -> String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    func validate() throws {
        if input == "-" {
            throw ValidationError("bench reads its input once per run: name a file, not - (standard input)")
        }
        if let frames, frames < 1 { throw ValidationError("--frames takes a positive number (got \(frames))") }
        guard (1...100).contains(repeats) else {
            throw ValidationError("--repeat takes a number from 1 to 100 (got \(repeats))")
        }
        if let threadList { _ = try Bench.parseThreads(threadList, cores: Bench.cores) }
        if write && encoding.codec == "none" {
            throw ValidationError("--codec none writes nothing: drop --write, or name an encoder")
        }
        if let chart {
            if RawPath.exists(chart) && !overwrite {
                throw ValidationError("--chart \(chart) exists (add -y to replace it)")
            }
            let dir = URL(fileURLWithPath: chart).deletingLastPathComponent().path
            var isDirectory: ObjCBool = false
            if !FileManager.default.fileExists(atPath: dir, isDirectory: &isDirectory) || !isDirectory.boolValue {
                throw ValidationError("--chart \(chart): the folder \(dir) does not exist")
            }
        }
        if ffmpegPath != nil && !compareFFmpeg { throw ValidationError("--ffmpeg needs --compare-ffmpeg") }
        if compareFFmpeg, let g = try? geometry.settings.configuration(input: "", output: "").geometry,
            g.movesWindow || g.warps
        {
            throw ValidationError(
                "--compare-ffmpeg compares static jobs: ffmpeg's CLI has no equivalent of keyframes, zoom below 1, "
                    + "rotation by any angle or --transform"
            )
        }
        if compareFFmpeg && ChildProcess.which(ffmpegPath ?? "ffmpeg") == nil {
            throw ValidationError(
                "--compare-ffmpeg: \(ffmpegPath ?? "ffmpeg") "
                    + "\(ffmpegPath == nil ? "is not on PATH" : "is not an executable file")"
            )
        }
    }

    /// ffmpeg's command for the job cropzoom ran (from the warm-up's report) at `threads`:
    /// the same coded window, scale and orientation (`-noautorotate` + the plan's filter chain),
    /// the same encoder and settings, audio copied as cropzoom copied it, the same sink.
    static func ffmpegCommand(
        binary: String, input: String, report: ChildReport, threads: Int, frames: Int?,
        encoding: TranscodeConfiguration, writeTo file: String?
    ) -> [String] {
        var c = [
            binary, "-hide_banner", "-nostdin", "-v", "error", "-nostats", "-progress", "pipe:2",
            "-threads", "\(threads)", "-noautorotate", "-i", input,
        ]
        if let frames { c += ["-frames:v", "\(frames)"] }
        c += ["-map", "0:v:0"]
        if report.audioReencoded > 0 {
            c += ["-map", "0:a?", "-c:a", "aac"]
        } else if report.audioCopied > 0 {
            c += ["-map", "0:a?", "-c:a", "copy"]
        } else {
            c += ["-an"]
        }
        c += ["-vf", report.ffmpegFilter]
        if report.codec != "none" {
            c += ["-c:v", report.codec, "-pix_fmt", report.pixelFormat]
            if let crf = encoding.crf { c += ["-crf", String(format: "%g", crf)] }
            if let preset = encoding.preset { c += ["-preset", preset] }
            if let bitrate = encoding.bitrate { c += ["-b:v", "\(bitrate)"] }
            c += ["-threads", "\(threads)"]
        }
        if let file { c += ["-y", file] } else { c += ["-f", "null", "-"] }
        return c
    }

    func run() throws {
        ProcessSignals.install()
        let cores = Bench.cores
        let threads =
            try threadList.map { try Bench.parseThreads($0, cores: cores) } ?? Bench.defaultThreads(cores: cores)
        var path = input ?? ""
        if input == nil {
            guard let found = Bench.findBundledSample() else {
                throw CommandError.usage(
                    "no INPUT given and the bundled sample \(Bench.bundledSample) is not in samples/ (name a clip)")
            }
            path = found
        }
        var warnings: [String] = []
        if let top = threads.last, top > cores {
            warnings.append(
                "asked for \(top) threads on a machine with \(cores) core\(cores == 1 ? "" : "s"): rows above "
                    + "\(cores) are oversubscribed (marked *); per-core figures and efficiency divide by \(cores)"
            )
        }
        for w in warnings { warn(w) }

        let exe = Bench.executablePath()
        let scratch =
            write
            ? FileManager.default.temporaryDirectory.appendingPathComponent("cropzoom-bench-\(getpid()).mkv").path : nil
        let settings = geometry.settings.merging(encoding.settings).merging(streams.settings)
        let encodingSettings = try settings.configuration(input: path, output: "")
        var args = ["transcode", path] + settings.arguments()
        args += scratch.map { ["-o", $0, "-y"] } ?? ["--null"]
        args += ["--progress", "json", "--stats"]
        if let frames { args += ["--bench-frames", "\(frames)"] }

        let style = progress.resolved
        let ffmpeg = compareFFmpeg ? ChildProcess.which(ffmpegPath ?? "ffmpeg") : nil
        let runner = BenchRunner(
            executable: exe, arguments: args, threadCounts: threads, repeats: repeats,
            ffmpegCommand: ffmpeg.map { bin in
                { report, t in
                    Bench.ffmpegCommand(
                        binary: bin, input: path, report: report, threads: t, frames: frames,
                        encoding: encodingSettings, writeTo: scratch)
                }
            },
            progress: { text in style.say("bench", text) },
            writtenFile: scratch)
        let measured: (points: [BenchPoint], report: ChildReport)
        do {
            measured = try runner.run()
        } catch let e as CommandError {
            style.clear()
            // Interrupted: the signal was passed on to the run, which stopped and left nothing.
            let signal = ProcessSignals.pending
            Stderr.write("cropzoom: error: \(signal != 0 ? "interrupted" : e.description)\n")
            throw ExitCode(signal != 0 ? 128 + signal : e.exitCode)
        }
        style.clear()

        var results = BenchResults(
            cores: cores, cpuName: Bench.cpuName(), system: Bench.systemName(), input: path,
            bundledSample: input == nil,
            command: [exe] + args, codec: measured.report.codec, outputSize: measured.report.outputSize,
            window: measured.report.window, sinkIsFile: write, repeats: repeats,
            ffmpegVersion: ffmpeg.flatMap(Bench.ffmpegVersion), points: measured.points, warnings: warnings)
        for w in results.sanityWarnings() {
            results.warnings.append(w)
            warn(w)
        }

        switch format {
        case .table: print(results.table(), terminator: "")
        case .json: print(try results.document().json(), terminator: "")
        case .csv: print(results.csv(), terminator: "")
        }
        if let chart { try Bench.writeAtomically(results.svg(), to: chart) }
    }

    private func warn(_ text: String) {
        Stderr.write("cropzoom: warning: \(text)\n")
    }

    /// Writes a chart or a report whole or not at all (the library's `AtomicFile`).
    static func writeAtomically(_ text: String, to path: String) throws {
        do throws(CropZoomError) {
            try AtomicFile.write(Data(text.utf8), to: path)
        } catch {
            throw CommandError.failure("\(path): cannot write it: \(error.reason)")
        }
    }

    /// "model name" from /proc/cpuinfo.
    static func cpuName() -> String {
        guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return "unknown CPU" }
        for line in text.split(separator: "\n") where line.hasPrefix("model name") {
            if let colon = line.firstIndex(of: ":") {
                return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        return "unknown CPU"
    }

    static func systemName() -> String {
        var u = utsname()
        uname(&u)
        func field<T>(_ t: T) -> String {
            withUnsafeBytes(of: t) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        }
        return "\(field(u.sysname)) \(field(u.release)) \(field(u.machine))"
    }

    /// The first line of `ffmpeg -version`, shortened to "ffmpeg version X".
    static func ffmpegVersion(_ binary: String) -> String? {
        guard let run = try? MeasuredChild.run(binary, ["-version"], reading: 1), run.succeeded else { return nil }
        let words = (run.lines.first ?? "").split(separator: " ")
        return words.count >= 3 ? words.prefix(3).joined(separator: " ") : nil
    }
}
