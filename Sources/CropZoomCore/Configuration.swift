import Foundation
import SystemPackage

/// Everything a transcode needs to know; built by the CLI (or any caller) and validated here.
public struct TranscodeConfiguration: Sendable, Equatable, Codable {
    public enum AudioMode: String, Sendable, CaseIterable, Codable {
        /// Copy every audio stream packet for packet; re-encode only what the container cannot hold.
        case auto
        /// Copy, and fail instead of re-encoding.
        case copy
        /// Re-encode every audio stream to AAC.
        case aac
        /// Drop audio.
        case none
    }
    public enum ProgressMode: String, Sendable, CaseIterable { case auto, bar, json, none }
    public enum Scaler: String, Sendable, CaseIterable, Codable { case bicubic, bilinear, lanczos, area, neighbor }
    /// Which library scales: zimg for pictures above 8 bits where it takes the conversion (planar
    /// YUV or grey, same range, not the area filter) and swscale for the rest (`auto`); only zimg
    /// (an error where it cannot); only swscale.
    public enum Kernel: String, Sendable, CaseIterable, Codable { case auto, zimg, swscale }
    /// Deinterlacing: `auto` frames the decoder flags interlaced, `on` every frame, `off` none.
    public enum Deinterlace: String, Sendable, CaseIterable, Codable { case auto, on, off }
    /// HDR to SDR: `auto` where the output cannot carry HDR (BT.2390's curve), a curve to map always, `off` never.
    public enum ToneMap: String, Sendable, CaseIterable, Codable { case auto, off, bt2390, hable, reinhard }

    public var input: String
    public var output: String
    /// `--reference`: an input whose writer crashed before its index is repaired first with this recording from the
    /// same camera and settings (as `RepairJob` does), and the repaired samples transcoded.
    public var reference: String? = nil
    public var geometry = GeometryRequest()
    /// `--stabilize`: the picture steadied along an L1-optimal camera path (nil: as recorded).
    public var stabilize: Stabilization? = nil
    /// `--follow`: the ``GeometryRequest/aspect`` window moved with the subject (nil: fixed).
    public var reframe: Reframing? = nil
    public var scaler: Scaler = .bicubic
    public var kernel: Kernel = .auto
    /// Interlaced frames are deinterlaced before scaling (one field kept, the other rebuilt from
    /// it); see ``Deinterlace``.
    public var deinterlace: Deinterlace = .auto

    /// Encoder name (`libx264`, `libvpx-vp9`, …); nil = from the output container.
    public var codec: String? = nil
    public var crf: Double? = nil
    public var preset: String? = nil
    /// `--profile`, `--level`, `--tune`: the encoder's options of those names.
    public var profile: String? = nil
    public var level: String? = nil
    public var tune: String? = nil
    /// `--tag`: the video stream's four-character code (`AVCodecParameters.codec_tag`); nil: the muxer's, hvc1 for
    /// HEVC in MP4/MOV.
    public var tag: String? = nil
    /// `--gop`: the most frames between keyframes (`AVCodecContext.gop_size`).
    public var gop: Int? = nil
    /// `--encoder-option`: the encoder's own options, given to it as they are (after cropzoom's, which they override).
    public var encoderOptions: [String: String] = [:]
    /// Target bit rate in bits per second.
    public var bitrate: Int? = nil
    /// Output pixel format name; nil = keep the input's when the encoder supports it.
    public var pixelFormat: String? = nil
    /// `--tone-map`: HDR video mapped to SDR BT.709 (see ``ToneMap``).
    public var toneMap: ToneMap = .auto

    public var audio: AudioMode = .auto
    /// `--audio-codec`: every audio stream re-encoded with this encoder, or the best one for this codec (`opus`
    /// → libopus); nil: AAC, or the container's own audio codec (Opus for WebM).
    public var audioCodec: String? = nil
    /// `--audio-bitrate`: the audio encoder's bit rate (bits per second); nil: 64 kb/s per channel, 128 kb/s stereo.
    public var audioBitrate: Int? = nil
    /// `--audio-channels`: a channel count or an FFmpeg layout name (`stereo`, `5.1`).
    public enum AudioChannels: Sendable, Equatable {
        case count(Int)
        case layout(String)
    }
    public var audioChannels: AudioChannels? = nil
    /// `--audio-stream`: an input audio stream by number (as `probe` shows it) or by language (ISO 639-2 `eng`).
    public enum StreamSelector: Sendable, Equatable {
        case index(Int)
        case language(String)
    }
    /// The audio streams kept (empty: every one).
    public var audioStreams: [StreamSelector] = []
    /// `--streams`: the kinds of input stream kept besides the video (audio is `audio`/`audioStreams`).
    public struct StreamKinds: Sendable, Equatable, Codable {
        /// Subtitle streams kept: nil none, empty every one, else those the selectors name.
        public var subtitles: [StreamSelector]? = []
        public var data = true
        public var cover = true
        public init() {}

        private enum CodingKeys: String, CodingKey { case subtitles, data, cover }

        /// A missing key keeps its default; `"subtitles": null` keeps none.
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            if c.contains(.subtitles) { subtitles = try c.decode([StreamSelector]?.self, forKey: .subtitles) }
            try c.update(&data, .data)
            try c.update(&cover, .cover)
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(subtitles, forKey: .subtitles)
            try c.encode(data, forKey: .data)
            try c.encode(cover, forKey: .cover)
        }
    }
    public var streamKinds = StreamKinds()
    /// Whether every audio stream is re-encoded, whatever the container could hold: `--audio aac`, or an audio
    /// codec, bit rate or channel count asked for.
    public var reencodesAudio: Bool {
        audio == .aac || audioCodec != nil || audioBitrate != nil || audioChannels != nil
    }
    /// What shows around the picture when it is zoomed out (`--zoom` below 1): a colour
    /// (sRGB 0–255, converted with BT.709 to the output's range and depth) or the picture's edge
    /// samples repeated outwards.
    public enum Background: Sendable, Equatable {
        case color(red: Int, green: Int, blue: Int)
        /// The picture's edge samples repeated outwards.
        case edge
        /// The picture itself, scaled to cover the frame and blurred (the "blurred bars" of
        /// phone clips shown in a wider frame).
        case blur
        /// No background: a rotated or moved picture is zoomed in, per frame, just enough to
        /// cover the frame (a horizon fix without corners).
        case cover
    }
    public var background: Background = .color(red: 0, green: 0, blue: 0)
    /// Threads for the whole job: nil = one per CPU the process may use (`UsableCPUs.count`). 1 runs every
    /// stage, codecs included, on the calling thread.
    public var threads: Int? = nil
    /// Overrides of the thread plan (nil = the measured default; see `ThreadPlan`): the video
    /// decoder's frame threads, the video encoder's threads and the transform workers. Ignored
    /// with `threads == 1`, which runs everything on one thread.
    public var decoderThreads: Int? = nil
    public var encoderThreads: Int? = nil
    public var workers: Int? = nil
    /// For measuring (`cropzoom bench --frames`): stop after this many video frames, in
    /// presentation order. Reading stops there; the audio read with those frames is kept and not
    /// cut at the last frame's end (trimming that keeps audio exact is `--start/--end`'s job).
    public var frameLimit: Int? = nil
    /// Trim (`--start`, `--end`/`--duration`): seconds from the start of the file (its first
    /// timestamp). Video is cut to the frame: the output's first frame is the first whose time is
    /// at or after `start`, its last the last before `end`. Copied audio is cut at packet
    /// boundaries (packets that start in [start, end)). Every timestamp is shifted by `start`, so
    /// the A/V offset is kept and the output starts at (first frame's time − start).
    public var start: Double? = nil
    public var end: Double? = nil
    /// Output container by muxer name ("matroska", "mpegts", "mp4", …); nil = from the output's
    /// extension. Needed when `output` is "-" (standard output).
    public var format: String? = nil
    /// Run every stage but write nothing (the output goes to FFmpeg's null muxer).
    public var null = false
    /// With `null`: skip the encoder too (`--codec none`).
    public var skipEncoder: Bool { codec == "none" }
    /// Keep the input's absolute timestamps. By default an input whose times are a clock reading
    /// (MPEG-TS/PS: `AVFMT_TS_DISCONT`) starts at 0, its streams' offsets kept exactly; a trimmed
    /// output starts at 0 too.
    public var keepStartTime = false
    /// Allow replacing an existing output (only once the new one is complete).
    public var overwrite = false
    /// Allow replacing a read-only output too (implies `overwrite`), as `cp -f` does.
    public var force = false
    /// Fail on corrupt packets instead of skipping and counting them.
    public var strict = false
    /// Print FFmpeg's own warnings.
    public var verbose = false

    /// Treat the input as live even where its name does not say so (a pipe fed in real time).
    public var live = false
    /// The demuxer or capture device to read the input with (`x11grab`, `v4l2`, `lavfi` …); nil: FFmpeg probes.
    public var inputFormat: String? = nil
    /// Options of that input format, device or protocol (`framerate`, `video_size` …).
    public var inputOptions: [String: String] = [:]
    /// `--framerate`: an image sequence's or raw stream's frame rate (the demuxer's `framerate` option), as given.
    public var frameRate: String? = nil
    /// Live: the most a video frame may lag behind its capture when a stage takes it (seconds).
    public var maxLatency: Double = 1
    /// Live: the recording ends after this long without data from the source (seconds).
    public var liveTimeout: Double = 5
    /// Live: a second input for sound, a capture device as `FORMAT:DEVICE` (`pulse:default`); its audio replaces the
    /// input's and is put on the same clock.
    public var audioInput: String? = nil
    /// Options of the sound device (`sample_rate`, `channels` …).
    public var audioInputOptions: [String: String] = [:]

    /// A new output file every this many seconds (`--segment`); nil: one file.
    public var segment: Double? = nil

    /// The name pattern of `--segment`'s files: the output's own when it has a `%d`/`%03d`, else `STEM-%03d.EXT`.
    public var segmentPattern: String {
        if output.range(of: #"%0?\d*d"#, options: .regularExpression) != nil { return output }
        let url = URL(fileURLWithPath: output)
        let ext = url.pathExtension
        let stem = ext.isEmpty ? output : String(output.dropLast(ext.count + 1))
        return stem + "-%03d" + (ext.isEmpty ? "" : "." + ext)
    }

    /// `audioInput` split into the device's format and name.
    public var audioDevice: (format: String, device: String)? {
        guard let text = audioInput, let colon = text.firstIndex(of: ":") else { return nil }
        return (String(text[..<colon]), String(text[text.index(after: colon)...]))
    }

    /// Capture devices: an input read with one of these formats is live.
    public static let captureDevices: Set<String> = [
        "x11grab", "v4l2", "video4linux2", "kmsgrab", "fbdev", "pulse", "alsa", "oss", "jack", "lavfi", "openal",
        "xcbgrab", "decklink", "dshow", "avfoundation", "gdigrab",
    ]
    /// URL schemes of live network sources.
    public static let liveSchemes: Set<String> = ["udp", "rtp", "srt", "rtmp", "rtmps", "rtsp", "tcp", "sctp"]

    /// The input is a live source: asked for, a capture device, a live network URL, or an HLS playlist over
    /// HTTP. A live job reads without waiting for later stages, drops late video frames (counted), never audio,
    /// and ends on SIGINT/SIGTERM keeping what it recorded.
    public var isLive: Bool {
        if live { return true }
        // A lavfi graph is a device only when something paces it in real time (`realtime`, `arealtime`); without,
        // it generates as fast as it is read, as a file would.
        if inputFormat == "lavfi" {
            return input.range(of: #"(^|[,;:\s\[\]])a?realtime($|[,;:=\s\[\]])"#, options: .regularExpression) != nil
        }
        if let f = inputFormat, Self.captureDevices.contains(f) { return true }
        let lower = input.lowercased()
        if let scheme = RawPath.scheme(of: lower) {
            if Self.liveSchemes.contains(scheme) { return true }
            if scheme == "http" || scheme == "https" { return lower.split(separator: "?")[0].hasSuffix(".m3u8") }
        }
        // A session description: the RTP stream it names.
        return lower.hasSuffix(".sdp")
    }

    /// The input as messages name it: its path, or `stdin` for `-`.
    public var inputName: String { input == "-" ? "stdin" : input }

    public init(input: String, output: String) {
        self.input = input
        self.output = output
    }

    /// A configuration for `input` → `output` as URLs: a file URL is its path (`URL.path`), any other (http, rtmp,
    /// srt …) goes to FFmpeg as it is written (`absoluteString`).
    public init(input: URL, output: URL) {
        self.init(input: RawPath.string(input), output: RawPath.string(output))
    }

    /// Decodes a configuration from JSON (or any `Decoder`): `input` and `output` are required, every other key
    /// keeps its default when absent, so a stored configuration stays readable when settings are added. Values are
    /// as Swift holds them (`"geometry": {"zoom": 2, "center": {"x": 0.6, "y": 0.4}}`), not validated until the job
    /// plans (``Settings`` parses and validates text as the command line does).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(input: try c.decode(String.self, forKey: .input), output: try c.decode(String.self, forKey: .output))
        try c.update(&geometry, .geometry)
        try c.update(&stabilize, .stabilize)
        try c.update(&reframe, .reframe)
        try c.update(&scaler, .scaler)
        try c.update(&kernel, .kernel)
        try c.update(&deinterlace, .deinterlace)
        try c.update(&codec, .codec)
        try c.update(&crf, .crf)
        try c.update(&preset, .preset)
        try c.update(&profile, .profile)
        try c.update(&level, .level)
        try c.update(&tune, .tune)
        try c.update(&tag, .tag)
        try c.update(&gop, .gop)
        try c.update(&encoderOptions, .encoderOptions)
        try c.update(&bitrate, .bitrate)
        try c.update(&pixelFormat, .pixelFormat)
        try c.update(&toneMap, .toneMap)
        try c.update(&audio, .audio)
        try c.update(&audioCodec, .audioCodec)
        try c.update(&audioBitrate, .audioBitrate)
        try c.update(&audioChannels, .audioChannels)
        try c.update(&audioStreams, .audioStreams)
        try c.update(&streamKinds, .streamKinds)
        try c.update(&background, .background)
        try c.update(&threads, .threads)
        try c.update(&decoderThreads, .decoderThreads)
        try c.update(&encoderThreads, .encoderThreads)
        try c.update(&workers, .workers)
        try c.update(&frameLimit, .frameLimit)
        try c.update(&start, .start)
        try c.update(&end, .end)
        try c.update(&format, .format)
        try c.update(&null, .null)
        try c.update(&keepStartTime, .keepStartTime)
        try c.update(&overwrite, .overwrite)
        try c.update(&force, .force)
        try c.update(&strict, .strict)
        try c.update(&reference, .reference)
        try c.update(&verbose, .verbose)
        try c.update(&live, .live)
        try c.update(&inputFormat, .inputFormat)
        try c.update(&inputOptions, .inputOptions)
        try c.update(&frameRate, .frameRate)
        try c.update(&maxLatency, .maxLatency)
        try c.update(&liveTimeout, .liveTimeout)
        try c.update(&audioInput, .audioInput)
        try c.update(&audioInputOptions, .audioInputOptions)
        try c.update(&segment, .segment)
    }
}

/// What a finished transcode did.
public struct TranscodeSummary: Sendable {
    public var output: String
    public var outputWidth: Int
    public var outputHeight: Int
    public var videoCodec: String
    public var pixelFormat: String
    public var framesIn: Int
    public var framesOut: Int
    /// Corrupt packets or frames that were skipped (not counted in `framesIn`).
    public var corruptSkipped: Int
    /// Frames whose timestamp repeated an earlier one and could not be stored twice.
    public var duplicateTimestampsDropped: Int
    /// Live: video frames dropped because a stage was late, by where, every ``DropPoint`` present (empty for a
    /// file).
    public var framesDropped: [DropPoint: Int] = [:]
    /// Live: how the recording ended ("stopped" by a signal or a stop request, "no data for 5 s"); nil at the
    /// source's end or for a file.
    public var liveEnd: String? = nil
    /// Times the input's clock restarted or jumped (a network sender reconnecting, an MPEG-TS whose times restart)
    /// and was re-based onto the recording's clock, nothing dropped for it.
    public var clockRestarts = 0
    /// Live: seconds from the job's start (set-up included) to the capture of the first frame recorded — how much
    /// of what the source showed after the command started is not in the recording. Nil for a file.
    public var firstFrameAfter: Double? = nil
    public var audioStreamsCopied: Int
    public var audioStreamsReencoded: Int
    public var otherStreamsCopied: Int
    public var streamsDropped: Int
    public var audioPackets: Int
    public var seconds: Double
    public var mediaDuration: Double
    public var notices: [String]
    /// Why the input looked cut short ("truncated: the data ends at 0.87 s of 2.00 s"), when
    /// it did: the output holds what was there. Nil for a complete input.
    public var truncated: String? = nil
    /// `--reference`: what the repair of an input without its index recovered before the transcode (nil: no repair).
    public var repair: RepairReport? = nil
    public var pool: PoolStatistics
    public var engine: EngineReport
    /// The window read from each decoded picture, in its coded (stored) pixels.
    public var window: PixelRect = PixelRect(x: 0, y: 0, width: 0, height: 0)
    /// The same geometry as an ffmpeg `-vf` chain, for `ffmpeg -noautorotate` (see
    /// `GeometryPlan.ffmpegFilter`): what `cropzoom bench --compare-ffmpeg` runs.
    public var ffmpegFilter: String = ""

    public var fps: Double { seconds > 0 ? Double(framesOut) / seconds : 0 }
    public var speed: Double { seconds > 0 ? mediaDuration / seconds : 0 }

    package init(
        output: String, outputWidth: Int, outputHeight: Int, videoCodec: String, pixelFormat: String, framesIn: Int,
        framesOut: Int, corruptSkipped: Int, duplicateTimestampsDropped: Int, audioStreamsCopied: Int,
        audioStreamsReencoded: Int, otherStreamsCopied: Int, streamsDropped: Int, audioPackets: Int, seconds: Double,
        mediaDuration: Double, notices: [String], truncated: String? = nil, pool: PoolStatistics, engine: EngineReport,
        window: PixelRect = PixelRect(x: 0, y: 0, width: 0, height: 0), ffmpegFilter: String = ""
    ) {
        self.output = output
        self.outputWidth = outputWidth
        self.outputHeight = outputHeight
        self.videoCodec = videoCodec
        self.pixelFormat = pixelFormat
        self.framesIn = framesIn
        self.framesOut = framesOut
        self.corruptSkipped = corruptSkipped
        self.duplicateTimestampsDropped = duplicateTimestampsDropped
        self.audioStreamsCopied = audioStreamsCopied
        self.audioStreamsReencoded = audioStreamsReencoded
        self.otherStreamsCopied = otherStreamsCopied
        self.streamsDropped = streamsDropped
        self.audioPackets = audioPackets
        self.seconds = seconds
        self.mediaDuration = mediaDuration
        self.notices = notices
        self.truncated = truncated
        self.pool = pool
        self.engine = engine
        self.window = window
        self.ffmpegFilter = ffmpegFilter
    }
}

/// Where a live recording dropped a video frame: the stage that was late (it could not take the frame in time).
public enum DropPoint: String, Sendable, CaseIterable, Codable, CodingKeyRepresentable {
    /// The decoder (or the reader) fell behind the source: packets were dropped up to the next keyframe.
    case input
    /// The transform workers were busy: a decoded frame waited too long, or was pushed out by newer ones.
    case transform
    /// The encoder was: no output picture was free for the transform.
    case encode
}

/// Counters of a frame pool.
public struct PoolStatistics: Sendable, Equatable {
    public var allocations = 0
    public var reuses = 0
    public var highWater = 0
    public var capacity = 0
    public init() {}
}

/// Progress events for a caller to show.
public struct ProgressEvent: Sendable {
    /// The passes of a two-pass job (`--stabilize`): the motion analysed, then the frames rendered.
    public enum Phase: String, Sendable, Codable { case analysing, rendering }
    /// Which pass this is; nil for a job of one pass.
    public var phase: Phase? = nil
    public var frames: Int
    /// Live: video frames dropped so far because a stage was late.
    public var framesDropped = 0
    /// Media time reached, in seconds since the input's start.
    public var time: Double
    /// Total media duration when known.
    public var duration: Double?
    public var elapsed: Double
    /// Live: frames received from the source (decoded) so far; nil for a file.
    public var framesIn: Int? = nil
    /// Live: the frames dropped so far by where (every ``DropPoint``; empty for a file).
    public var lateBy: [DropPoint: Int] = [:]
    /// Live: how far the last encoded frame is behind its capture (seconds), once frames are encoded.
    public var latency: Double? = nil
    public var fraction: Double? {
        guard let duration, duration > 0 else { return nil }
        return min(1, max(0, time / duration))
    }

    package init(frames: Int, framesDropped: Int = 0, time: Double, duration: Double? = nil, elapsed: Double) {
        self.frames = frames
        self.framesDropped = framesDropped
        self.time = time
        self.duration = duration
        self.elapsed = elapsed
    }
}

/// How the work was spread and where the time went.
public struct EngineReport: Sendable {
    /// Threads the job was given (1 = everything on one thread).
    public var threads: Int
    public var transformWorkers: Int
    public var decoderThreads: Int
    public var encoderThreads: Int
    /// Busy seconds per stage (transform: all workers together).
    public var busy: [EngineStage: Double]
    /// Seconds stages spent blocked on queues and pools, by what they waited for.
    public var waits: [EngineWait: Double]
    /// Process CPU time (user + system) over the run, in seconds.
    public var cpuSeconds: Double
    /// Nice value the stages before the encoder ran at (0: the same priority as the encoder).
    public var upstreamNice = 0
    public init(
        threads: Int, transformWorkers: Int, decoderThreads: Int, encoderThreads: Int,
        busy: [EngineStage: Double] = [:], waits: [EngineWait: Double] = [:], cpuSeconds: Double = 0,
        upstreamNice: Int = 0
    ) {
        self.upstreamNice = upstreamNice
        self.threads = threads
        self.transformWorkers = transformWorkers
        self.decoderThreads = decoderThreads
        self.encoderThreads = encoderThreads
        self.busy = busy
        self.waits = waits
        self.cpuSeconds = cpuSeconds
    }
}

/// What a transcode would do (`TranscodeJob.plan`): the input window read, the output, the codecs.
public struct JobPlan: Sendable, Codable, Equatable {
    public var input: String
    public var output: String
    /// Output container (muxer name guessed from the output's extension).
    public var container: String
    /// The window read from each decoded picture, in its coded pixels.
    public var window: PixelRect
    public var outputWidth: Int
    public var outputHeight: Int
    /// The orthogonal transform applied after scaling (display rotation, `--rotate`, `--flip`),
    /// "none" when the picture is used as coded.
    public var orientation: String
    public var videoCodec: String
    public var pixelFormat: String
    /// One entry per audio stream kept: "#1 copied", "#2 re-encoded (aac)".
    public var audio: [String]
    public var notices: [String]
    /// What changes from frame to frame (empty for a static geometry): "zoom keyframes",
    /// "centre keyframes", "crop keyframes", "zoom out", "rotation 7.5°", "rotation keyframes",
    /// "matrix", "matrix keyframes". `window` is then the first frame's (whole pixels).
    public var motion: [String] = []

    package init(
        input: String, output: String, container: String, window: PixelRect, outputWidth: Int, outputHeight: Int,
        orientation: String, videoCodec: String, pixelFormat: String, audio: [String], notices: [String],
        motion: [String] = []
    ) {
        self.input = input
        self.output = output
        self.container = container
        self.window = window
        self.outputWidth = outputWidth
        self.outputHeight = outputHeight
        self.orientation = orientation
        self.videoCodec = videoCodec
        self.pixelFormat = pixelFormat
        self.audio = audio
        self.notices = notices
        self.motion = motion
    }
}
