// Test oracle: independent measurements of media files made with the FFmpeg
// command-line tools (`ffprobe`, `ffmpeg`), for checking what cropzoom writes.
//
// No media code of the package's own (only ChildProcess's shell quoting, for messages).  Every function
// runs a subprocess synchronously, so call them from tests freely (they block
// the calling thread, never the cooperative pool's other tasks for long).

import CropZoomKit
import Foundation

/// Measurements of media files through the `ffprobe` / `ffmpeg` CLIs.
enum Oracle {

    // MARK: - Errors

    /// Why an oracle call failed.  The description carries the command line
    /// and the child's stderr, so a failing test says what went wrong.
    struct Failure: Error, CustomStringConvertible, Sendable {
        let description: String

        init(_ description: String) { self.description = description }

        static func exit(_ command: [String], _ status: Int32, stderr: String) -> Failure {
            Failure("`\(ChildProcess.shellQuoted(command))` exited with status \(status); stderr:\n\(stderr)")
        }
    }

    // MARK: - Types

    /// A rational number such as a time base (`1/15360`) or a sample aspect
    /// ratio (`1:1`).
    struct Rational: Equatable, Hashable, Sendable, CustomStringConvertible {
        var num: Int64
        var den: Int64

        /// The value as a `Double` (`nan` when `den` is 0).
        var doubleValue: Double { den == 0 ? .nan : Double(num) / Double(den) }

        var description: String { "\(num)/\(den)" }

        /// Parses `"N/D"` or `"N:D"`; nil for anything else.
        init?(parsing text: String?) {
            guard let text else { return nil }
            let parts = text.split(whereSeparator: { $0 == "/" || $0 == ":" })
            guard parts.count == 2, let n = Int64(parts[0]), let d = Int64(parts[1]) else { return nil }
            self.init(num: n, den: d)
        }

        init(num: Int64, den: Int64) {
            self.num = num
            self.den = den
        }
    }

    /// One stream as `ffprobe -show_streams` describes it.
    struct StreamInfo: Equatable, Sendable {
        /// Absolute stream index in the file.
        var index: Int
        /// `video`, `audio`, `subtitle`, `data`, ...
        var codecType: String
        /// e.g. `h264`, `aac`; nil when libavcodec does not know the codec.
        var codecName: String?
        var profile: String?
        /// Coded (not rotated) size.
        var width: Int?
        var height: Int?
        var pixFmt: String?
        var sampleRate: Int?
        var channels: Int?
        var timeBase: Rational
        /// Seconds; nil when ffprobe reports none.
        var startTime: Double?
        /// Seconds; nil when ffprobe reports none.
        var duration: Double?
        /// `tv`, `pc`, or nil when unknown/unspecified.
        var colorRange: String?
        /// nil when the stream has none (ffprobe omits `0:1`).
        var sampleAspectRatio: Rational?
        var avgFrameRate: Rational?
        /// Container's frame count, when it stores one.
        var nbFrames: Int?
        /// Degrees from the "Display Matrix" side data, as ffprobe prints it
        /// (counter-clockwise; a clip to be shown turned 90° clockwise says -90).
        var rotation: Double?

        /// The size as displayed, after applying a ±90°/270° rotation.
        var uprightSize: (width: Int, height: Int)? {
            guard let width, let height else { return nil }
            let quarterTurns = Int(((rotation ?? 0) / 90).rounded())
            return quarterTurns % 2 == 0 ? (width, height) : (height, width)
        }
    }

    /// The container as `ffprobe -show_format` describes it.
    struct FormatInfo: Equatable, Sendable {
        /// e.g. `mov,mp4,m4a,3gp,3g2,mj2`, `matroska,webm`, `mpegts`.
        var formatName: String
        /// Seconds; nil when ffprobe reports none.
        var formatStartTime: Double?
        var duration: Double?
        var streamCount: Int
        var size: Int64?
    }

    /// One packet as `ffprobe -show_packets -show_data_hash MD5` describes it.
    struct PacketInfo: Equatable, Sendable {
        var pts: Int64?
        var ptsTime: Double?
        var dtsTime: Double?
        var durationTime: Double?
        var size: Int
        /// ffprobe's flag string: `K` key frame, `D` discard, `C` corrupt, `_` unset.
        var flags: String
        /// `MD5:<hex>` of the packet payload.
        var hash: String
        /// Where the packet is in the file (nil when the demuxer does not say).
        var pos: Int? = nil

        var isKeyframe: Bool { flags.contains("K") }
    }

    // MARK: - Running processes

    /// Runs `executable` (a path, or a bare name looked up on `PATH`) with
    /// `args`, stdin from /dev/null, and returns its exit status and full
    /// output.  Does not throw on a non-zero exit (see ``runChecked(_:_:timeout:)``);
    /// throws when the program cannot be started or runs longer than `timeout`
    /// seconds, in which case it is killed (SIGTERM, then SIGKILL).
    ///
    /// Output goes to temporary files rather than pipes, so a chatty child can
    /// never deadlock against a full pipe buffer.
    static func run(_ executable: String, _ args: [String], timeout: TimeInterval = 120)
        throws -> (status: Int32, stdout: String, stderr: String)
    {
        let command = [executable] + args
        let process = Process()
        process.executableURL = try resolveExecutable(executable)
        process.arguments = args
        process.standardInput = FileHandle.nullDevice

        let scratch = try tempDirectory(prefix: "oracle-run")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let outURL = scratch.appendingPathComponent("stdout")
        let errURL = scratch.appendingPathComponent("stderr")
        guard FileManager.default.createFile(atPath: outURL.path, contents: nil),
            FileManager.default.createFile(atPath: errURL.path, contents: nil)
        else { throw Failure("cannot create output files in \(scratch.path)") }
        let outHandle = try FileHandle(forWritingTo: outURL)
        let errHandle = try FileHandle(forWritingTo: errURL)
        defer {
            try? outHandle.close()
            try? errHandle.close()
        }
        process.standardOutput = outHandle
        process.standardError = errHandle

        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        do {
            try process.run()
        } catch {
            throw Failure("cannot start `\(ChildProcess.shellQuoted(command))`: \(error)")
        }

        if exited.wait(timeout: .now() + timeout) == .timedOut {
            process.terminate()
            if exited.wait(timeout: .now() + 5) == .timedOut {
                kill(process.processIdentifier, SIGKILL)
                exited.wait()
            }
            let stderr = (try? String(contentsOf: errURL, encoding: .utf8)) ?? ""
            throw Failure(
                "`\(ChildProcess.shellQuoted(command))` timed out after \(timeout) s and was killed; stderr:\n\(stderr)"
            )
        }

        let stdout = String(decoding: try Data(contentsOf: outURL), as: UTF8.self)
        let stderr = String(decoding: try Data(contentsOf: errURL), as: UTF8.self)
        return (process.terminationStatus, stdout, stderr)
    }

    /// Like ``run(_:_:timeout:)`` but throws, with the stderr, on a non-zero
    /// exit status; returns stdout and stderr.
    @discardableResult
    static func runChecked(_ executable: String, _ args: [String], timeout: TimeInterval = 120)
        throws -> (stdout: String, stderr: String)
    {
        let result = try run(executable, args, timeout: timeout)
        guard result.status == 0 else {
            throw Failure.exit([executable] + args, result.status, stderr: result.stderr)
        }
        return (result.stdout, result.stderr)
    }

    // MARK: - ffprobe: streams and format

    /// All streams of `path`, from
    /// `ffprobe -v error -show_streams -show_format -of json`.
    static func streams(_ path: String) throws -> [StreamInfo] {
        try probe(path).streams.map(streamInfo)
    }

    /// The container-level facts of `path` (format name, start time, ...).
    static func format(_ path: String) throws -> FormatInfo {
        let report = try probe(path)
        guard let raw = report.format else { throw Failure("ffprobe printed no format section for \(path)") }
        return FormatInfo(
            formatName: raw.format_name ?? "",
            formatStartTime: seconds(raw.start_time),
            duration: seconds(raw.duration),
            streamCount: raw.nb_streams ?? report.streams.count,
            size: raw.size.flatMap { Int64($0) })
    }

    // MARK: - ffprobe: frames and packets

    /// Presentation times (seconds) of every decoded frame of the `stream`-th
    /// video stream (`-select_streams v:N`, relative among video streams), in
    /// the order the decoder outputs them, i.e. presentation order.  The list
    /// is deliberately not sorted, so non-monotonic timestamps show up.
    ///
    /// ffprobe decodes every frame and reports it as is: it never drops or
    /// duplicates frames (no frame-rate conversion, unlike the ffmpeg CLI's
    /// default `-fps_mode`), so this is passthrough timing.  It does not apply
    /// the display matrix either.  `best_effort_timestamp_time` is used where
    /// `pts_time` is missing; a frame with neither makes this throw, and so
    /// does a missing stream.  A stream that cannot be decoded (unknown codec)
    /// gives an empty list.
    static func videoFramePTS(_ path: String, stream: Int = 0) throws -> [Double] {
        let args = [
            "-v", "error", "-select_streams", "v:\(stream)",
            "-show_entries", "frame=pts_time,best_effort_timestamp_time",
            "-of", "json", path,
        ]
        let report: FramesReport = try decode(try runChecked("ffprobe", args).stdout, from: args)
        let frames = report.frames ?? []
        if frames.isEmpty, try streams(path).filter({ $0.codecType == "video" }).count <= stream {
            throw Failure("\(path) has no video stream v:\(stream)")
        }
        return try frames.enumerated().map { number, frame in
            guard let t = seconds(frame.pts_time) ?? seconds(frame.best_effort_timestamp_time) else {
                throw Failure("frame \(number) of \(path) v:\(stream) has no timestamp")
            }
            return t
        }
    }

    /// What ffmpeg reports when it decodes every stream of `path` (`-v error`, to the null muxer): its status and
    /// the decoders' and demuxer's complaints. The null muxer's own lines are left out: it re-times frames on a
    /// 1/fps grid, where two frames of a live capture less than a frame apart collide ("non monotonically
    /// increasing dts"), which says nothing of the file.
    static func decodeComplaints(_ path: String) throws -> (status: Int32, complaints: String) {
        let r = try run("ffmpeg", ["-v", "error", "-i", path, "-f", "null", "-"])
        let lines = r.stderr.split(separator: "\n", omittingEmptySubsequences: false).filter {
            !$0.hasPrefix("[null @") && !$0.trimmingCharacters(in: .whitespaces).isEmpty
        }
        return (r.status, lines.joined(separator: "\n"))
    }

    /// Every packet of the stream with absolute index `streamIndex`, in file
    /// order, with an MD5 of each payload (`-show_data_hash MD5`).
    static func packets(_ path: String, streamIndex: Int) throws -> [PacketInfo] {
        let args = [
            "-v", "error", "-select_streams", "\(streamIndex)", "-show_data_hash", "MD5",
            "-show_entries", "packet=pts,pts_time,dts_time,duration_time,size,flags,data_hash,pos",
            "-of", "json", path,
        ]
        let report: PacketsReport = try decode(try runChecked("ffprobe", args).stdout, from: args)
        return (report.packets ?? []).map { raw in
            PacketInfo(
                pts: raw.pts,
                ptsTime: seconds(raw.pts_time),
                dtsTime: seconds(raw.dts_time),
                durationTime: seconds(raw.duration_time),
                size: raw.size.flatMap { Int($0) } ?? 0,
                flags: raw.flags ?? "",
                hash: raw.data_hash ?? "",
                pos: raw.pos.flatMap { Int($0) })
        }
    }

    // MARK: - ffmpeg: picture comparison

    /// Mean PSNR (dB, the psnr filter's `average:`) of the first video stream
    /// of `output` against a reference made from `filterInput`'s first video
    /// stream through `referenceFilter` (e.g.
    /// `crop=W:H:X:Y,scale=640:360:flags=bicubic,format=yuv420p`).
    /// Identical pictures give `+infinity`.
    ///
    /// Runs `ffmpeg -i INPUT -i OUTPUT -filter_complex
    /// "[0:v]<referenceFilter>,format=F[ref];[1:v]format=F[out];[ref][out]psnr"
    /// -fps_mode passthrough -f null -`, with F = `pixelFormat`:
    /// - the output's own pixel format (yuv444p, 10-bit, full range...) is
    ///   converted to `pixelFormat` by swscale before comparing, and so is the
    ///   reference (a no-op when the filter already ends with that format);
    /// - the ffmpeg CLI auto-rotates both inputs by their display matrix, so
    ///   the reference is the upright picture, as cropzoom should produce;
    /// - frames are paired by timestamp, each input's timestamps starting from
    ///   its file's start time; when one input ends early the psnr filter
    ///   repeats its last frame, which lowers the score.
    /// - `referenceAutorotate: false` passes `-noautorotate` for the reference input only,
    ///   for inputs whose display matrix the 5.1 CLI renders wrongly (the filter then has to
    ///   turn the coded picture upright itself).
    /// - `alignStarts: true` pairs frames by their index (`settb=1,setpts=N` on both branches):
    ///   the n-th output frame is compared with the n-th input frame, whatever the containers'
    ///   start times and time-base rounding (1/1000 in Matroska puts a frame at 67 ms where the
    ///   input has 66.667 ms, and the psnr filter would then pair it with the previous one).
    ///   Frame counts and timestamps are checked separately, by `Contract.checkFrames`.
    static func meanPSNR(
        reference filterInput: String, referenceFilter: String, output: String,
        pixelFormat: String = "yuv420p", referenceAutorotate: Bool = true,
        alignStarts: Bool = false, outputFilter: String? = nil
    ) throws -> Double {
        let rebase = alignStarts ? "settb=1,setpts=N," : ""
        let graph =
            "[0:v]\(rebase)\(referenceFilter),format=\(pixelFormat)[ref];"
            + "[1:v]\(rebase)\(outputFilter.map { $0 + "," } ?? "")format=\(pixelFormat)[out];[ref][out]psnr"
        let args =
            ["-hide_banner", "-nostats", "-nostdin"]
            + (referenceAutorotate ? [] : ["-noautorotate"])
            + [
                "-i", filterInput, "-i", output,
                "-filter_complex", graph, "-fps_mode", "passthrough", "-f", "null", "-",
            ]
        let stderr = try runChecked("ffmpeg", args).stderr
        guard let line = stderr.split(separator: "\n").last(where: { $0.contains("PSNR") && $0.contains("average:") }),
            let value = line.split(separator: " ").last(where: { $0.hasPrefix("average:") })?.dropFirst(
                "average:".count)
        else {
            throw Failure(
                "no PSNR summary in the stderr of `\(ChildProcess.shellQuoted(["ffmpeg"] + args))`:\n\(stderr)")
        }
        if value == "inf" { return .infinity }
        guard let psnr = Double(value) else { throw Failure("cannot parse PSNR average '\(value)' in: \(line)") }
        return psnr
    }

    /// MD5 of each decoded frame of the first video stream of `path`, in
    /// output order, from `ffmpeg -i path -map 0:v:0 -fps_mode passthrough
    /// -f framemd5 -` (hash of the raw picture in the decoder's pixel format).
    /// With `autorotate` false (the default) the display matrix is ignored, so
    /// these are the frames as coded.
    static func decodedFrameHashes(_ path: String, autorotate: Bool = false) throws -> [String] {
        let args =
            ["-hide_banner", "-nostats", "-nostdin", "-loglevel", "error"]
            + (autorotate ? [] : ["-noautorotate"])
            + ["-i", path, "-map", "0:v:0", "-fps_mode", "passthrough", "-f", "framemd5", "-"]
        let stdout = try runChecked("ffmpeg", args).stdout
        return stdout.split(separator: "\n")
            .filter { !$0.hasPrefix("#") }
            .compactMap { line in
                line.split(separator: ",").last.map { $0.trimmingCharacters(in: .whitespaces) }
            }
    }

    // MARK: - Files and folders

    /// A fresh, empty, uniquely named folder under the system temp folder.
    /// The caller removes it when done.
    static func tempDirectory() throws -> URL {
        try tempDirectory(prefix: "cropzoom-test")
    }

    /// The package root: the nearest folder above this source file that holds
    /// a `Package.swift`; nil when there is none.
    static var packageRoot: URL? {
        var folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while folder.path != "/" {
            if FileManager.default.fileExists(atPath: folder.appendingPathComponent("Package.swift").path) {
                return folder
            }
            folder = folder.deletingLastPathComponent()
        }
        return nil
    }

    /// `samples/` in the package root (clips made by `samples/generate.sh`),
    /// or nil when absent.
    static var samplesDirectory: URL? {
        existingDirectory(packageRoot?.appendingPathComponent("samples"))
    }

    /// `../shared/corpus` relative to the package root (real-world clips kept
    /// outside the repo), or nil when absent — or when `CROPZOOM_TEST_NO_CORPUS=1`
    /// asks the tests to run as they do in a checkout without it.
    static var corpusDirectory: URL? {
        if ProcessInfo.processInfo.environment["CROPZOOM_TEST_NO_CORPUS"] == "1" { return nil }
        return existingDirectory(
            packageRoot?.deletingLastPathComponent()
                .appendingPathComponent("shared").appendingPathComponent("corpus"))
    }

    // MARK: - Private helpers

    /// Subset of ffprobe's `-of json` output; field names are ffprobe's (so not lowerCamelCase).
    // swift-format-ignore: AlwaysUseLowerCamelCase
    private struct ProbeReport: Decodable {
        struct Stream: Decodable {
            struct SideData: Decodable {
                var side_data_type: String?
                var rotation: Double?
            }
            var index: Int
            var codec_type: String?
            var codec_name: String?
            var profile: String?
            var width: Int?
            var height: Int?
            var pix_fmt: String?
            var sample_rate: String?
            var channels: Int?
            var time_base: String?
            var start_time: String?
            var duration: String?
            var color_range: String?
            var sample_aspect_ratio: String?
            var avg_frame_rate: String?
            var nb_frames: String?
            var side_data_list: [SideData]?
        }
        struct Format: Decodable {
            var format_name: String?
            var start_time: String?
            var duration: String?
            var nb_streams: Int?
            var size: String?
        }
        var streams: [Stream]
        var format: Format?

        enum CodingKeys: String, CodingKey { case streams, format }

        init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            streams = try c.decodeIfPresent([Stream].self, forKey: .streams) ?? []
            format = try c.decodeIfPresent(Format.self, forKey: .format)
        }
    }

    // swift-format-ignore: AlwaysUseLowerCamelCase
    private struct FramesReport: Decodable {
        struct Frame: Decodable {
            var pts_time: String?
            var best_effort_timestamp_time: String?
        }
        var frames: [Frame]?
    }

    // swift-format-ignore: AlwaysUseLowerCamelCase
    private struct PacketsReport: Decodable {
        struct Packet: Decodable {
            var pts: Int64?
            var pts_time: String?
            var dts_time: String?
            var duration_time: String?
            var size: String?
            var flags: String?
            var data_hash: String?
            var pos: String?
        }
        var packets: [Packet]?
    }

    private static func streamInfo(_ raw: ProbeReport.Stream) -> StreamInfo {
        StreamInfo(
            index: raw.index,
            codecType: raw.codec_type ?? "unknown",
            codecName: raw.codec_name,
            profile: raw.profile,
            width: raw.width,
            height: raw.height,
            pixFmt: raw.pix_fmt,
            sampleRate: raw.sample_rate.flatMap { Int($0) },
            channels: raw.channels,
            timeBase: Rational(parsing: raw.time_base) ?? Rational(num: 0, den: 1),
            startTime: seconds(raw.start_time),
            duration: seconds(raw.duration),
            colorRange: raw.color_range.flatMap { $0 == "unknown" ? nil : $0 },
            sampleAspectRatio: Rational(parsing: raw.sample_aspect_ratio),
            avgFrameRate: Rational(parsing: raw.avg_frame_rate),
            nbFrames: raw.nb_frames.flatMap { Int($0) },
            rotation: raw.side_data_list?.first(where: { $0.side_data_type == "Display Matrix" })?.rotation)
    }

    private static func probe(_ path: String) throws -> ProbeReport {
        let args = ["-v", "error", "-show_streams", "-show_format", "-of", "json", path]
        return try decode(try runChecked("ffprobe", args).stdout, from: args)
    }

    private static func decode<T: Decodable>(_ json: String, from args: [String]) throws -> T {
        do {
            return try JSONDecoder().decode(T.self, from: Data(json.utf8))
        } catch {
            throw Failure("cannot decode the JSON of `ffprobe \(ChildProcess.shellQuoted(args))`: \(error)")
        }
    }

    /// ffprobe's time strings ("1.234000"); nil for absent or "N/A".
    private static func seconds(_ text: String?) -> Double? {
        text.flatMap { Double($0) }
    }

    private static func tempDirectory(prefix: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("\(prefix)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    private static func existingDirectory(_ url: URL?) -> URL? {
        guard let url else { return nil }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory),
            isDirectory.boolValue
        else { return nil }
        return url.standardizedFileURL
    }

    /// `name` itself when it contains a `/`, else the first executable file
    /// called `name` in a `PATH` folder.
    private static func resolveExecutable(_ name: String) throws -> URL {
        if name.contains("/") { return URL(fileURLWithPath: name) }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for folder in path.split(separator: ":") where !folder.isEmpty {
            let candidate = URL(fileURLWithPath: String(folder)).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        throw Failure("`\(name)` not found on PATH (\(path))")
    }
}
