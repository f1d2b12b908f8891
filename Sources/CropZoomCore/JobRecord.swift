import Foundation

/// One line of `cropzoom transcode --progress json` (NDJSON on standard error): the events of a job as a script, or
/// `batch`, `run` and `bench` reading their child processes, see them. The JSON names are stable (snake_case, the
/// `event` key says which record a line is; docs/failing-safely.md, "Progress and summary").
public enum JobRecord: Sendable, Equatable, Codable {
    /// A few times a second.
    case progress(Progress)
    /// A stream re-encoded or dropped, and the like.
    case notice(Message)
    /// The input was cut short, and the like.
    case warning(Message)
    /// The job finished: what it wrote.
    case done(Done)
    /// `--stats`: the engine's account of the run (after `done`).
    case stats(Stats)
    /// The job failed: the one-line message and the process's exit code.
    case error(Failure)

    public struct Progress: Sendable, Equatable, Codable {
        /// A two-pass job's pass (`analysing`, `rendering`; `--stabilize`); absent for one pass.
        public var phase: String? = nil
        public var frames: Int
        /// Media time reached and wall time, in seconds.
        public var time: Double
        public var elapsed: Double
        public var fps: Double
        public var speed: Double
        /// Of the duration, when it is known.
        public var percent: Double?
        public var duration: Double?
        /// Live: video frames dropped so far.
        public var framesDropped: Int? = nil
        /// Live: frames received from the source so far and their rate (fps in; `fps` is the rate out).
        public var framesIn: Int? = nil
        public var fpsIn: Double? = nil
        /// Live: the frames dropped so far by where (`input`, `transform`, `encode`).
        public var lateBy: [String: Int]? = nil
        /// Live: seconds the last encoded frame is behind its capture.
        public var latency: Double? = nil

        enum CodingKeys: String, CodingKey {
            case phase, frames, time, elapsed, fps, speed, percent, duration
            case framesDropped = "frames_dropped"
            case framesIn = "frames_in"
            case fpsIn = "fps_in"
            case lateBy = "late_by"
            case latency
        }
    }

    public struct Message: Sendable, Equatable, Codable {
        public var message: String
        public init(message: String) { self.message = message }
    }

    public struct Done: Sendable, Equatable, Codable {
        public var output: String
        public var width: Int
        public var height: Int
        public var codec: String
        public var pixFmt: String
        public var framesIn: Int
        public var framesOut: Int
        public var corruptSkipped: Int
        public var duplicateTimestampsDropped: Int
        public var audioStreamsCopied: Int
        public var audioStreamsReencoded: Int
        public var audioPackets: Int
        public var seconds: Double
        public var fps: Double
        public var speed: Double
        public var window: PixelRect
        public var ffmpegFilter: String
        public var pool: Pool
        /// Why the input looked cut short, when it did.
        public var truncated: String?
        /// Live: video frames dropped because a stage was late, in all and by where (absent for a file).
        public var framesDropped: Int? = nil
        public var lateBy: [String: Int]? = nil
        /// Live: how the recording ended ("stopped", "no data for 5 s"); absent at the source's end.
        public var liveEnd: String? = nil
        /// Times the input's clock restarted and was re-based (absent when it never did).
        public var clockRestarts: Int? = nil
        /// Live: seconds from the job's start to the capture of the first frame recorded.
        public var firstFrameAfter: Double? = nil
        /// `--reference`: what the repair of an input without its index recovered (absent: no repair).
        public var repair: RepairReport? = nil

        enum CodingKeys: String, CodingKey {
            case output, width, height, codec, seconds, fps, speed, window, pool, truncated, repair
            case pixFmt = "pix_fmt"
            case framesIn = "frames_in"
            case framesOut = "frames_out"
            case corruptSkipped = "corrupt_skipped"
            case duplicateTimestampsDropped = "duplicate_timestamps_dropped"
            case audioStreamsCopied = "audio_streams_copied"
            case audioStreamsReencoded = "audio_streams_reencoded"
            case audioPackets = "audio_packets"
            case ffmpegFilter = "ffmpeg_filter"
            case framesDropped = "frames_dropped"
            case lateBy = "late_by"
            case liveEnd = "live_end"
            case clockRestarts = "clock_restarts"
            case firstFrameAfter = "first_frame_after"
        }
    }

    /// The frame pool's counters.
    public struct Pool: Sendable, Equatable, Codable {
        public var allocations: Int
        public var reuses: Int
        public var highWater: Int
        public var capacity: Int

        enum CodingKeys: String, CodingKey {
            case allocations, reuses, capacity
            case highWater = "high_water"
        }
    }

    public struct Stats: Sendable, Equatable, Codable {
        public var threads: Int
        public var decoderThreads: Int
        public var encoderThreads: Int
        public var transformWorkers: Int
        public var upstreamNice: Int
        public var cpuSeconds: Double
        /// Busy seconds by ``EngineStage`` raw value, waits by ``EngineWait`` raw value.
        public var busySeconds: [String: Double]
        public var waitSeconds: [String: Double]

        enum CodingKeys: String, CodingKey {
            case threads
            case decoderThreads = "decoder_threads"
            case encoderThreads = "encoder_threads"
            case transformWorkers = "transform_workers"
            case upstreamNice = "upstream_nice"
            case cpuSeconds = "cpu_seconds"
            case busySeconds = "busy_seconds"
            case waitSeconds = "wait_seconds"
        }
    }

    public struct Failure: Sendable, Equatable, Codable {
        public var message: String
        public var exitCode: Int

        public init(message: String, exitCode: Int) {
            self.message = message
            self.exitCode = exitCode
        }

        enum CodingKeys: String, CodingKey {
            case message
            case exitCode = "exit_code"
        }
    }

    // MARK: From the library's values (times rounded to the millisecond)

    public init(_ p: ProgressEvent) {
        let fps = p.elapsed > 0 ? Double(p.frames) / p.elapsed : 0
        let speed = p.elapsed > 0 ? p.time / p.elapsed : 0
        self = .progress(
            Progress(
                phase: p.phase?.rawValue, frames: p.frames, time: Self.round3(p.time), elapsed: Self.round3(p.elapsed),
                fps: Self.round3(fps),
                speed: Self.round3(speed), percent: p.fraction.map { Self.round3($0 * 100) },
                duration: p.duration.map(Self.round3), framesDropped: p.framesDropped > 0 ? p.framesDropped : nil,
                framesIn: p.framesIn, fpsIn: p.framesIn.map { Self.round3(p.elapsed > 0 ? Double($0) / p.elapsed : 0) },
                lateBy: p.framesIn == nil
                    ? nil
                    : Dictionary(uniqueKeysWithValues: DropPoint.allCases.map { ($0.rawValue, p.lateBy[$0] ?? 0) }),
                latency: p.latency.map(Self.round3)))
    }

    /// The `done` record of a summary.
    public static func finished(_ s: TranscodeSummary) -> JobRecord {
        .done(
            Done(
                output: s.output, width: s.outputWidth, height: s.outputHeight, codec: s.videoCodec,
                pixFmt: s.pixelFormat, framesIn: s.framesIn, framesOut: s.framesOut, corruptSkipped: s.corruptSkipped,
                duplicateTimestampsDropped: s.duplicateTimestampsDropped, audioStreamsCopied: s.audioStreamsCopied,
                audioStreamsReencoded: s.audioStreamsReencoded, audioPackets: s.audioPackets,
                seconds: round3(s.seconds), fps: round3(s.fps), speed: round3(s.speed), window: s.window,
                ffmpegFilter: s.ffmpegFilter,
                pool: Pool(
                    allocations: s.pool.allocations, reuses: s.pool.reuses, highWater: s.pool.highWater,
                    capacity: s.pool.capacity),
                truncated: s.truncated,
                framesDropped: s.framesDropped.isEmpty ? nil : s.framesDropped.values.reduce(0, +),
                lateBy: s.framesDropped.isEmpty
                    ? nil : Dictionary(uniqueKeysWithValues: s.framesDropped.map { ($0.key.rawValue, $0.value) }),
                liveEnd: s.liveEnd, clockRestarts: s.clockRestarts > 0 ? s.clockRestarts : nil,
                firstFrameAfter: s.firstFrameAfter.map(round3), repair: s.repair))
    }

    /// The `stats` record of a summary's engine report.
    public static func statistics(_ s: TranscodeSummary) -> JobRecord {
        let e = s.engine
        return .stats(
            Stats(
                threads: e.threads, decoderThreads: e.decoderThreads, encoderThreads: e.encoderThreads,
                transformWorkers: e.transformWorkers, upstreamNice: e.upstreamNice, cpuSeconds: round3(e.cpuSeconds),
                busySeconds: Dictionary(uniqueKeysWithValues: e.busy.map { ($0.key.rawValue, round3($0.value)) }),
                waitSeconds: Dictionary(uniqueKeysWithValues: e.waits.map { ($0.key.rawValue, round3($0.value)) })))
    }

    static func round3(_ v: Double) -> Double { (v * 1000).rounded() / 1000 }

    // MARK: One line of JSON

    /// The record as one line of JSON (sorted keys, no newline).
    public var jsonLine: Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)) ?? Data()
    }

    /// The record a line holds; nil for any other line (plain text, another program's JSON).
    public init?(jsonLine line: String) {
        guard line.hasPrefix("{"), let record = try? JSONDecoder().decode(JobRecord.self, from: Data(line.utf8))
        else { return nil }
        self = record
    }

    private enum EventKey: String, CodingKey { case event }

    public init(from decoder: any Decoder) throws {
        let event = try decoder.container(keyedBy: EventKey.self).decode(String.self, forKey: .event)
        switch event {
        case "progress": self = .progress(try Progress(from: decoder))
        case "notice": self = .notice(try Message(from: decoder))
        case "warning": self = .warning(try Message(from: decoder))
        case "done": self = .done(try Done(from: decoder))
        case "stats": self = .stats(try Stats(from: decoder))
        case "error": self = .error(try Failure(from: decoder))
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .event, in: try decoder.container(keyedBy: EventKey.self), debugDescription: "event \(event)")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: EventKey.self)
        switch self {
        case .progress(let p):
            try c.encode("progress", forKey: .event)
            try p.encode(to: encoder)
        case .notice(let m):
            try c.encode("notice", forKey: .event)
            try m.encode(to: encoder)
        case .warning(let m):
            try c.encode("warning", forKey: .event)
            try m.encode(to: encoder)
        case .done(let d):
            try c.encode("done", forKey: .event)
            try d.encode(to: encoder)
        case .stats(let s):
            try c.encode("stats", forKey: .event)
            try s.encode(to: encoder)
        case .error(let f):
            try c.encode("error", forKey: .event)
            try f.encode(to: encoder)
        }
    }
}
