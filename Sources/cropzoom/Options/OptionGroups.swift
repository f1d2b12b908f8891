import ArgumentParser
import CropZoomKit
import Foundation

/// Where and how much of the picture to keep.
struct GeometryOptions: ParsableArguments {
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Digital zoom around the centre (≥ 0.1; below 1 zooms out over --background), or keyframes 'TIMEs:Z, "
                + "…' (e.g. '0s:1, 4s:1.65'); the output keeps the input's displayed size unless --size says "
                + "otherwise.",
            valueName: "Z"))
    var zoom: String = "1"

    @Option(
        help: ArgumentHelp(
            "Centre of the zoom/crop window as fractions of the upright frame (the window is clamped inside the "
                + "picture), or keyframes 'TIMEs:X,Y, …'.",
            valueName: "X,Y"))
    var center: String = "0.5,0.5"

    @Option(help: "Between keyframes: linear, or smooth (continuous speed, no overshoot).")
    var ease: Track.Ease = .linear

    @Option(
        help: ArgumentHelp(
            "Around a zoomed-out, rotated or moved picture: black (default), white, gray, #RRGGBB, edge (the "
                + "picture's edge samples repeated outwards), blur (the picture scaled to cover the frame, "
                + "blurred), or cover (with --rotate/--transform: zoom in just enough that no corner shows).",
            valueName: "FILL"))
    var background: String = "black"

    /// `--crop W:H[:X:Y]`, or keyframes `'TIMEs:W:H[:X:Y], …'` (every key with X:Y or none, one
    /// aspect ratio): the window as a track of [W, H, X, Y] in whole pixels, X and Y NaN when
    /// the window is centred on `--center`.
    static func parseCrop(_ text: String) throws -> Track {
        let form =
            "--crop takes W:H or W:H:X:Y in whole pixels (e.g. 1280:720), or keyframes 'TIMEs:W:H[:X:Y], …' (e.g. "
            + "'0s:1920:1080:0:0, 4s:960:540:480:270')"
        var track: Track
        do { track = try Track.parse(text, counts: [2, 4], separator: ":", option: "--crop") } catch {
            throw ValidationError("\(error.reason) (W:H[:X:Y], or keyframes 'TIMEs:W:H[:X:Y], …')")
        }
        for k in track.keys {
            // Whole pixels within what a picture can have (an Int conversion must not trap).
            guard k.value.allSatisfy({ $0 == $0.rounded() && abs($0) <= 1_048_576 }), k.value[0] > 0, k.value[1] > 0
            else {
                throw ValidationError("\(form) (got '\(text)')")
            }
            if k.value.count == 4, k.value[2] < 0 || k.value[3] < 0 {
                throw ValidationError("--crop offsets must not be negative (got '\(text)')")
            }
        }
        do { try GeometryPlan.checkCropAspect(track) } catch { throw ValidationError(error.reason) }
        track.keys = track.keys.map {
            .init(time: $0.time, value: $0.value.count == 4 ? $0.value : $0.value + [.nan, .nan])
        }
        return track
    }

    /// `--background` → the configuration's value; nil when malformed.
    static func parseBackground(_ text: String) -> TranscodeConfiguration.Background? {
        switch text.lowercased() {
        case "black": return .color(red: 0, green: 0, blue: 0)
        case "white": return .color(red: 255, green: 255, blue: 255)
        case "gray", "grey": return .color(red: 128, green: 128, blue: 128)
        case "edge": return .edge
        case "blur": return .blur
        case "cover": return .cover
        default:
            let hex = text.hasPrefix("#") ? String(text.dropFirst()) : ""
            guard hex.count == 6, let v = Int(hex, radix: 16) else { return nil }
            return .color(red: v >> 16 & 255, green: v >> 8 & 255, blue: v & 255)
        }
    }

    @Option(
        help: ArgumentHelp(
            "Crop window in pixels of the upright picture; centred (on --center) when X:Y is omitted; or keyframes "
                + "'TIMEs:W:H[:X:Y], …' (one aspect ratio).",
            valueName: "W:H[:X:Y]"))
    var crop: String?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Output size; -1 or -2 for one side keeps the aspect ratio (rounded to what the pixel format needs, "
                + "even for 4:2:0).",
            valueName: "WxH"))
    var size: String?

    // `.unconditional` (here and on every option that takes a number): the value may start with
    // a minus sign (`--rotate -3`, `--size -2x720`); a wrong negative gets its option's own
    // message instead of ArgumentParser's "Missing value".
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Rotate clockwise after cropping: 90, 180 or 270 turn the frame; any other angle (e.g. 7.5 or -3) or "
                + "keyframes 'TIMEs:DEG, …' rotate the picture inside a frame of the same size, corners showing "
                + "--background.",
            valueName: "DEGREES"))
    var rotate: String = "0"

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "A CGAffineTransform-style matrix in output pixels, applied last: the picture's point (x, y) moves to "
                + "(a·x + c·y + tx, b·x + d·y + ty); or keyframes 'TIMEs:A,B,C,D,TX,TY, …'.",
            valueName: "A,B,C,D,TX,TY"))
    var transform: String?

    @Option(help: ArgumentHelp("Mirror after rotating: horizontal or vertical."))
    var flip: GeometryRequest.Flip?

    @Option(help: "Scaling filter: bicubic, bilinear, lanczos, area, neighbor.")
    var scaler: TranscodeConfiguration.Scaler = .bicubic

    @Option(
        help: ArgumentHelp(
            "Scaling library: auto (zimg for planar YUV and grey above 8 bits, swscale for 8-bit pictures and the "
                + "rest), zimg (fail where it cannot), swscale.")
    )
    var kernel: TranscodeConfiguration.Kernel = .auto

    @Option(
        help: ArgumentHelp(
            "auto: deinterlace the frames the decoder flags interlaced (one field kept, the other rebuilt from "
                + "it); on: every frame; off: none.")
    )
    var deinterlace: TranscodeConfiguration.Deinterlace = .auto

    @Option(
        help: ArgumentHelp(
            "auto: output upright as a player shows the input (rotation, mirror and pixel aspect applied); ignore: "
                + "work on the coded pixels and keep the input's display matrix and aspect.")
    )
    var orientation: GeometryRequest.OrientationMode = .auto

    func validate() throws {
        _ = try request()
    }

    /// The geometry request, or a ValidationError naming the option.
    func request() throws -> GeometryRequest {
        var g = GeometryRequest()
        var zoomTrack: Track
        do { zoomTrack = try Track.parse(zoom, components: 1, option: "--zoom") } catch {
            throw ValidationError("--zoom must be a number (≥ 0.1) or keyframes like '0s:1, 4s:1.65' (got '\(zoom)')")
        }
        guard zoomTrack.keys.allSatisfy({ $0.value[0] >= GeometryPlan.minimumZoom }) else {
            throw ValidationError("--zoom must be a number ≥ \(GeometryPlan.minimumZoom) (got \(zoom))")
        }
        if GeometryOptions.parseBackground(background) == nil {
            throw ValidationError(
                "--background takes black, white, gray, #RRGGBB, edge, blur or cover (got '\(background)')")
        }
        zoomTrack.ease = ease
        g.zoom = zoomTrack.keys[0].value[0]
        if zoomTrack.isAnimated { g.zoomTrack = zoomTrack }
        var centerTrack: Track
        do { centerTrack = try Track.parse(center, components: 2, option: "--center") } catch {
            throw ValidationError(
                "--center takes X,Y as fractions between 0 and 1, e.g. 0.5,0.4, or keyframes like '0s:0.5,0.5, "
                    + "4s:0.6,0.4' (got '\(center)')"
            )
        }
        guard centerTrack.keys.allSatisfy({ $0.value.allSatisfy { (0...1).contains($0) } }) else {
            throw ValidationError("--center takes X,Y as fractions between 0 and 1, e.g. 0.5,0.4 (got '\(center)')")
        }
        centerTrack.ease = ease
        g.center = (centerTrack.keys[0].value[0], centerTrack.keys[0].value[1])
        if centerTrack.isAnimated { g.centerTrack = centerTrack }
        if let crop {
            var track = try GeometryOptions.parseCrop(crop)
            track.ease = ease
            let first = track.keys[0].value
            g.crop = .init(
                width: Int(first[0]), height: Int(first[1]),
                x: first[2].isNaN ? nil : Int(first[2]), y: first[3].isNaN ? nil : Int(first[3]))
            if track.isAnimated { g.cropTrack = track }
        }
        if let size {
            let p = size.lowercased().split(separator: "x").map { Int($0) }
            guard p.count == 2, let w = p[0], let h = p[1], w > 0 || w == -1 || w == -2, h > 0 || h == -1 || h == -2,
                w > 0 || h > 0
            else {
                throw ValidationError("--size takes WxH, with -1 or -2 for one side to keep the aspect (got '\(size)')")
            }
            guard w <= 16384, h <= 16384 else {
                throw ValidationError("--size: at most 16384 pixels a side (got '\(size)')")
            }
            g.size = .init(width: w, height: h)
        }
        var angle: Track
        do { angle = try Track.parse(rotate, components: 1, option: "--rotate") } catch {
            throw ValidationError(
                "--rotate takes degrees clockwise (90, 180, 270, or any angle such as 7.5 or -3) or keyframes like "
                    + "'0s:0, 2s:10' (got '\(rotate)')"
            )
        }
        angle.ease = ease
        guard angle.keys.allSatisfy({ abs($0.value[0]) <= 1_000_000 }) else {
            throw ValidationError("--rotate: at most 1000000 degrees either way (got '\(rotate)')")
        }
        let degrees = angle.keys[0].value[0]
        if !angle.isAnimated, degrees.truncatingRemainder(dividingBy: 90) == 0 {
            let quarter = (Int(degrees.truncatingRemainder(dividingBy: 360)) + 360) % 360
            g.rotate = quarter
        } else {
            g.angle = angle
        }
        if let transform {
            var m: Track
            do { m = try Track.parse(transform, components: 6, option: "--transform") } catch {
                throw ValidationError(
                    "--transform takes six numbers a,b,c,d,tx,ty (e.g. 1.2,0,0,1.2,-192,-108) or keyframes like "
                        + "'0s:1,0,0,1,0,0, 4s:1.5,0,0,1.5,-480,-270' (got '\(transform)')"
                )
            }
            m.ease = ease
            do throws(CropZoomError) { try GeometryPlan.checkTransform(m) } catch {
                throw ValidationError(error.reason)
            }
            g.transform = m
        }
        g.flip = flip
        g.orientation = orientation
        return g
    }
}

/// How to encode the video.
struct EncodingOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Video encoder by name (default from the output container: libx264 for mp4/mov/mkv/ts, libvpx-vp9 for "
                + "webm); none (with --null) skips encoding.")
    )
    var codec: String?

    @Option(parsing: .unconditional, help: "Constant-quality value for the encoder (x264/x265 0–51, VP9 0–63).")
    var crf: Double?

    @Option(help: "Encoder preset (x264/x265: ultrafast … veryslow).")
    var preset: String?

    @Option(parsing: .unconditional, help: ArgumentHelp("Target video bit rate, e.g. 4M or 800k.", valueName: "RATE"))
    var bitrate: String?

    @Option(
        name: .customLong("pix-fmt"),
        help: "Output pixel format (default: the input's when the encoder takes it, else the nearest one it does).")
    var pixFmt: String?

    func validate() throws {
        if let crf, !(crf >= 0 && crf <= 63) { throw ValidationError("--crf must be between 0 and 63 (got \(crf))") }
        if let bitrate, EncodingOptions.parseBitrate(bitrate) == nil {
            throw ValidationError(
                "--bitrate takes a number of bits per second, optionally with k or M (got '\(bitrate)')")
        }
    }

    static func parseBitrate(_ s: String) -> Int? {
        let t = s.trimmingCharacters(in: .whitespaces).lowercased()
        var mult = 1.0
        var num = Substring(t)
        if t.hasSuffix("k") {
            mult = 1e3
            num = num.dropLast()
        } else if t.hasSuffix("m") {
            mult = 1e6
            num = num.dropLast()
        }
        // Up to 100 Gbit/s: beyond any encoder, and the Int conversion must not trap.
        guard let v = Double(num), v > 0, v * mult <= 1e11 else { return nil }
        return Int(v * mult)
    }
}

/// What to do with audio, subtitles and data.
struct StreamOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "auto: copy every audio stream packet for packet, re-encoding (AAC, Opus for WebM) only what the "
                + "container cannot carry; copy: fail instead of re-encoding; aac: re-encode to AAC; none: drop audio.")
    )
    var audio: TranscodeConfiguration.AudioMode = .auto
}

/// Output file handling and reporting.
struct OutputOptions: ParsableArguments {
    @Option(name: [.customShort("o"), .long], help: "Output file; its extension picks the container.")
    var output: String?

    @Option(
        help: ArgumentHelp(
            "Output container by muxer name (matroska, mpegts, mp4, mov, webm, …); default from the output's "
                + "extension. Needed with -o - (standard output; MP4 is then fragmented).",
            valueName: "NAME"))
    var format: String?

    @Flag(name: .customLong("null"), help: "Run every stage but write nothing (for measuring); -o is then optional.")
    var null = false

    @Flag(name: [.customShort("y"), .long], help: "Replace OUTPUT if it exists (only once the new file is complete).")
    var overwrite = false

    @Flag(help: "Like -y, and replace a read-only OUTPUT too.")
    var force = false

    @Flag(help: "Print nothing but errors.")
    var quiet = false

    @Option(help: "auto (a bar on a terminal, else nothing), bar, json (NDJSON events on stderr), none.")
    var progress: TranscodeConfiguration.ProgressMode = .auto

    @Flag(help: "Fail on damaged packets instead of skipping and counting them.")
    var strict = false

    @Flag(name: [.customShort("v"), .long], help: "Show FFmpeg's own warnings.")
    var verbose = false

    @Flag(help: "Print the engine's statistics at the end: threads, per-stage busy time, queue waits, pool counters.")
    var stats = false

    func validate() throws {
        // A missing -o is refused by Transcode.validate, which can see a stray OUTPUT argument.
        if output == "-" && format == nil && !null {
            throw ValidationError(
                "-o - (standard output) needs --format (matroska, mpegts, mp4, …): there is no extension to go by")
        }
        if output == "-" && isatty(1) != 0 {
            throw ValidationError("-o - would write video to the terminal: redirect or pipe standard output")
        }
    }
}

/// The part of the input to keep.
struct TrimOptions: ParsableArguments {
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Start at this time from the beginning of the file: seconds (12.5) or [hh:]mm:ss[.mmm]. The first "
                + "frame kept is the first at or after it.",
            valueName: "T"))
    var start: String?

    @Option(
        parsing: .unconditional, help: ArgumentHelp("Stop before this time (same forms as --start).", valueName: "T"))
    var end: String?

    @Option(
        parsing: .unconditional, help: ArgumentHelp("Keep this long from --start (instead of --end).", valueName: "T"))
    var duration: String?

    @Flag(help: "Keep the input's absolute timestamps (an MPEG-TS clock reading included) instead of starting at 0.")
    var keepStartTime = false

    /// "12.5", "1:02.5", "01:02:03.250" → seconds; nil when malformed.
    static func seconds(_ text: String) -> Double? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count) else { return nil }
        var total = 0.0
        for (i, p) in parts.enumerated() {
            let last = i == parts.count - 1
            guard !p.isEmpty, let v = last ? Double(p) : Double(p).flatMap({ $0 == $0.rounded() ? $0 : nil }),
                v >= 0, v.isFinite
            else { return nil }
            if !last && parts.count > 1 && i > 0 && v >= 60 { return nil }
            if last && parts.count > 1 && v >= 60 { return nil }
            total = total * 60 + v
        }
        return total
    }

    func validate() throws {
        for (name, value) in [("--start", start), ("--end", end), ("--duration", duration)] {
            if let value, TrimOptions.seconds(value) == nil {
                throw ValidationError("\(name) \(value): not a time (seconds like 12.5, or [hh:]mm:ss[.mmm])")
            }
        }
        if end != nil && duration != nil {
            throw ValidationError("--end and --duration both say where to stop: give one")
        }
        let s = start.flatMap(TrimOptions.seconds) ?? 0
        if let e = end.flatMap(TrimOptions.seconds), e <= s {
            throw ValidationError("--end \(end!) is not after --start \(start ?? "0")")
        }
        if let d = duration.flatMap(TrimOptions.seconds), d <= 0 {
            throw ValidationError("--duration must be more than 0")
        }
    }

    /// (start, end) in seconds for the configuration.
    var range: (start: Double?, end: Double?) {
        let s = start.flatMap(TrimOptions.seconds)
        if let d = duration.flatMap(TrimOptions.seconds) { return (s, (s ?? 0) + d) }
        return (s, end.flatMap(TrimOptions.seconds))
    }

    func arguments() -> [String] {
        var a: [String] = []
        if let start { a += ["--start", start] }
        if let end { a += ["--end", end] }
        if let duration { a += ["--duration", duration] }
        if keepStartTime { a.append("--keep-start-time") }
        return a
    }
}

/// How many cores to use.
struct EngineOptions: ParsableArguments {
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            """
            Threads for the whole job (default: one per CPU this process may use: affinity, cgroup quota). \
            1 runs every stage, codecs included, on one thread.
            """, valueName: "N"))
    var threads: Int?

    @Option(
        name: .customLong("decoder-threads"), parsing: .unconditional,
        help: ArgumentHelp(
            "Frame threads of the video decoder (default: the measured plan, see the README).", valueName: "N"))
    var decoderThreads: Int?

    @Option(
        name: .customLong("encoder-threads"), parsing: .unconditional,
        help: ArgumentHelp("Threads of the video encoder (default: the measured plan, see the README).", valueName: "N")
    )
    var encoderThreads: Int?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Transform workers (default: the measured plan, see the README).", valueName: "N"))
    var workers: Int?

    /// `cropzoom bench --frames N` passes this to each run: stop after N video frames (audio is
    /// not cut at that point, so it is not offered as a transcode option).
    @Option(name: .customLong("bench-frames"), help: .hidden)
    var benchFrames: Int?

    func validate() throws {
        if let threads, threads < 1 || threads > 256 {
            throw ValidationError("--threads takes a number from 1 to 256 (got \(threads))")
        }
        for (name, value) in [
            ("--decoder-threads", decoderThreads), ("--encoder-threads", encoderThreads), ("--workers", workers),
        ] {
            guard let value else { continue }
            if value < 1 || value > 256 { throw ValidationError("\(name) takes a number from 1 to 256 (got \(value))") }
            if threads == 1 {
                throw ValidationError("\(name) needs more than one thread: --threads 1 runs everything on one thread")
            }
        }
        if let benchFrames, benchFrames < 1 {
            throw ValidationError("--bench-frames takes a positive number (got \(benchFrames))")
        }
    }
}

extension GeometryRequest.Flip: ExpressibleByArgument {}
extension GeometryRequest.OrientationMode: ExpressibleByArgument {}
extension TranscodeConfiguration.Scaler: ExpressibleByArgument {}
extension TranscodeConfiguration.Kernel: ExpressibleByArgument {}
extension TranscodeConfiguration.Deinterlace: ExpressibleByArgument {}
extension TranscodeConfiguration.AudioMode: ExpressibleByArgument {}
extension TranscodeConfiguration.ProgressMode: ExpressibleByArgument {}
extension Track.Ease: ExpressibleByArgument {}

// The options as `transcode` arguments again, for `cropzoom bench`'s runs: only what differs
// from the defaults, so a run's command line reads like one a person would type.
extension GeometryOptions {
    func arguments() -> [String] {
        var a: [String] = []
        if zoom != "1" { a += ["--zoom", zoom] }
        if center != "0.5,0.5" { a += ["--center", center] }
        if ease != .linear { a += ["--ease", ease.rawValue] }
        if background != "black" { a += ["--background", background] }
        if let crop { a += ["--crop", crop] }
        if let size { a += ["--size", size] }
        if rotate != "0" { a += ["--rotate", rotate] }
        if let transform { a += ["--transform", transform] }
        if let flip { a += ["--flip", flip.rawValue] }
        if scaler != .bicubic { a += ["--scaler", scaler.rawValue] }
        if kernel != .auto { a += ["--kernel", kernel.rawValue] }
        if deinterlace != .auto { a += ["--deinterlace", deinterlace.rawValue] }
        if orientation != .auto { a += ["--orientation", orientation.rawValue] }
        return a
    }
}

extension EncodingOptions {
    func arguments() -> [String] {
        var a: [String] = []
        if let codec { a += ["--codec", codec] }
        if let crf { a += ["--crf", "\(crf)"] }
        if let preset { a += ["--preset", preset] }
        if let bitrate { a += ["--bitrate", bitrate] }
        if let pixFmt { a += ["--pix-fmt", pixFmt] }
        return a
    }
}

extension StreamOptions {
    func arguments() -> [String] { audio == .auto ? [] : ["--audio", audio.rawValue] }
}

extension TranscodeConfiguration {
    /// The settings `transcode`, `batch` and `run` share: geometry, trim, encoding, audio.
    mutating func apply(
        geometry: GeometryOptions, trim: TrimOptions, encoding: EncodingOptions,
        streams: StreamOptions
    ) throws {
        self.geometry = try geometry.request()
        background = GeometryOptions.parseBackground(geometry.background) ?? .color(red: 0, green: 0, blue: 0)
        scaler = geometry.scaler
        kernel = geometry.kernel
        deinterlace = geometry.deinterlace
        (start, end) = trim.range
        keepStartTime = trim.keepStartTime
        codec = encoding.codec
        crf = encoding.crf
        preset = encoding.preset
        bitrate = encoding.bitrate.flatMap(EncodingOptions.parseBitrate)
        pixelFormat = encoding.pixFmt
        audio = streams.audio
    }
}
