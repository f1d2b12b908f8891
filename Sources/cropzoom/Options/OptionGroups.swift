import ArgumentParser
import CropZoomKit
import Foundation

// The option groups the commands share. The settings a transcode takes are the library's
// (`Setting`: names, help, value names; `Settings`: parsing and validation): each option here
// only says which setting it is, and each group hands its values over as `Settings`. The
// library's messages name settings, written here as flags (`--crop`).

/// Where and how much of the picture to keep.
struct GeometryOptions: ParsableArguments {
    // `.unconditional` (here and on every option that takes a number): the value may start with
    // a minus sign (`--rotate -3`, `--size -2x720`); a wrong negative gets its option's own
    // message instead of ArgumentParser's "Missing value".
    @Option(name: .setting(.zoom), parsing: .unconditional, help: .setting(.zoom)) var zoom: String?
    @Option(name: .setting(.center), help: .setting(.center)) var center: String?
    @Option(name: .setting(.ease), help: .setting(.ease), completion: .setting(.ease)) var ease: String?
    @Option(name: .setting(.background), help: .setting(.background)) var background: String?
    @Option(name: .setting(.crop), help: .setting(.crop)) var crop: String?
    @Option(name: .setting(.aspect), help: .setting(.aspect)) var aspect: String?
    @Option(name: .setting(.follow), help: .setting(.follow), completion: .setting(.follow)) var follow: String?
    @Option(name: .setting(.preview), help: .setting(.preview), completion: .file(extensions: ["png"]))
    var preview: String?
    @Option(name: .setting(.size), parsing: .unconditional, help: .setting(.size)) var size: String?
    @Option(name: .setting(.fit), help: .setting(.fit), completion: .setting(.fit)) var fit: String?
    @Option(name: .setting(.rotate), parsing: .unconditional, help: .setting(.rotate)) var rotate: String?
    @Option(name: .setting(.transform), parsing: .unconditional, help: .setting(.transform)) var transform: String?
    @Option(name: .setting(.flip), help: .setting(.flip), completion: .setting(.flip)) var flip: String?
    @Option(name: .setting(.scaler), help: .setting(.scaler), completion: .setting(.scaler)) var scaler: String?
    @Option(name: .setting(.kernel), help: .setting(.kernel), completion: .setting(.kernel)) var kernel: String?
    @Option(name: .setting(.deinterlace), help: .setting(.deinterlace), completion: .setting(.deinterlace))
    var deinterlace: String?
    @Option(name: .setting(.orientation), help: .setting(.orientation), completion: .setting(.orientation))
    var orientation: String?

    var settings: Settings {
        Settings([
            .zoom: zoom, .center: center, .ease: ease, .background: background, .crop: crop, .aspect: aspect,
            .follow: follow, .preview: preview, .size: size, .fit: fit,
            .rotate: rotate, .transform: transform, .flip: flip, .scaler: scaler, .kernel: kernel,
            .deinterlace: deinterlace, .orientation: orientation,
        ])
    }

    func validate() throws { try settings.validate() }
}

/// `--stabilize` and its refinements.
struct StabilizeOptions: ParsableArguments {
    @Flag(name: .setting(.stabilize), help: .setting(.stabilize)) var stabilize = false
    @Option(name: .setting(.stabilizeSmoothing), help: .setting(.stabilizeSmoothing)) var smoothing: String?
    @Option(name: .setting(.stabilizeMode), help: .setting(.stabilizeMode), completion: .setting(.stabilizeMode))
    var mode: String?
    @Option(name: .setting(.stabilizeCrop), help: .setting(.stabilizeCrop)) var crop: String?
    @Option(
        name: .setting(.stabilizeBorder), help: .setting(.stabilizeBorder), completion: .setting(.stabilizeBorder))
    var border: String?
    @Option(name: .setting(.pathIn), help: .setting(.pathIn), completion: .file(extensions: ["csv"]))
    var pathIn: String?
    @Option(name: .setting(.pathOut), help: .setting(.pathOut), completion: .file(extensions: ["csv"]))
    var pathOut: String?

    var settings: Settings {
        Settings([
            .stabilize: stabilize ? "true" : nil, .stabilizeSmoothing: smoothing, .stabilizeMode: mode,
            .stabilizeCrop: crop, .stabilizeBorder: border, .pathIn: pathIn, .pathOut: pathOut,
        ])
    }

    func validate() throws { try settings.validate() }
}

/// The part of the input to keep.
struct TrimOptions: ParsableArguments {
    @Option(name: .setting(.start), parsing: .unconditional, help: .setting(.start)) var start: String?
    @Option(name: .setting(.end), parsing: .unconditional, help: .setting(.end)) var end: String?
    @Option(name: .setting(.duration), parsing: .unconditional, help: .setting(.duration)) var duration: String?
    @Flag(name: .setting(.keepStartTime), help: .setting(.keepStartTime)) var keepStartTime = false

    var settings: Settings {
        Settings([.start: start, .end: end, .duration: duration, .keepStartTime: keepStartTime ? "true" : nil])
    }

    func validate() throws { try settings.validate() }
}

/// How to encode the video.
struct EncodingOptions: ParsableArguments {
    @Option(name: .setting(.codec), help: .setting(.codec)) var codec: String?
    @Option(name: .setting(.crf), parsing: .unconditional, help: .setting(.crf)) var crf: String?
    @Option(name: .setting(.preset), help: .setting(.preset)) var preset: String?
    @Option(name: .setting(.bitrate), parsing: .unconditional, help: .setting(.bitrate)) var bitrate: String?
    @Option(name: .setting(.pixFmt), help: .setting(.pixFmt)) var pixFmt: String?
    @Option(name: .setting(.toneMap), help: .setting(.toneMap), completion: .setting(.toneMap)) var toneMap: String?
    @Option(name: .setting(.profile), help: .setting(.profile)) var profile: String?
    @Option(name: .setting(.level), help: .setting(.level)) var level: String?
    @Option(name: .setting(.tune), help: .setting(.tune)) var tune: String?
    @Option(name: [.customLong("gop"), .customLong("keyint")], help: .setting(.gop)) var gop: String?
    @Option(name: .setting(.encoderOption), help: .setting(.encoderOption)) var encoderOption: [String] = []
    @Option(name: .setting(.tag), help: .setting(.tag)) var tag: String?

    var settings: Settings {
        Settings([
            .codec: codec, .crf: crf, .preset: preset, .bitrate: bitrate, .pixFmt: pixFmt, .toneMap: toneMap,
            .profile: profile,
            .level: level, .tune: tune, .gop: gop, .tag: tag,
            .encoderOption: encoderOption.isEmpty ? nil : encoderOption.joined(separator: "\n"),
        ])
    }

    func validate() throws { try settings.validate() }
}

/// What to do with audio, subtitles and data.
struct StreamOptions: ParsableArguments {
    @Option(name: .setting(.audio), help: .setting(.audio), completion: .setting(.audio)) var audio: String?
    @Option(name: .setting(.audioCodec), help: .setting(.audioCodec)) var audioCodec: String?
    @Option(name: .setting(.audioBitrate), help: .setting(.audioBitrate)) var audioBitrate: String?
    @Option(name: .setting(.audioChannels), help: .setting(.audioChannels)) var audioChannels: String?
    @Option(name: .setting(.audioStream), help: .setting(.audioStream)) var audioStream: [String] = []
    @Option(name: .setting(.streams), help: .setting(.streams)) var streams: String?

    var settings: Settings {
        Settings([
            .audio: audio, .audioCodec: audioCodec, .audioBitrate: audioBitrate, .audioChannels: audioChannels,
            .audioStream: audioStream.isEmpty ? nil : audioStream.joined(separator: "\n"), .streams: streams,
        ])
    }

    func validate() throws { try settings.validate() }
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

    @Flag(name: .setting(.force), help: .setting(.force))
    var force = false

    @Flag(help: "Print nothing but errors.")
    var quiet = false

    @Option(help: "auto (a bar on a terminal, else nothing), bar, json (NDJSON events on stderr), none.")
    var progress: TranscodeConfiguration.ProgressMode = .auto

    @Flag(name: .setting(.strict), help: .setting(.strict))
    var strict = false

    @Option(name: .setting(.reference), help: .setting(.reference))
    var reference: String?

    @Option(name: .setting(.segment), parsing: .unconditional, help: .setting(.segment))
    var segment: String?

    @Flag(name: [.customShort("v"), .long], help: "Show FFmpeg's own warnings.")
    var verbose = false

    @Flag(help: "Print the engine's statistics at the end: threads, per-stage busy time, queue waits, pool counters.")
    var stats = false

    /// The output handling the library takes as settings.
    var settings: Settings {
        Settings([
            .strict: strict ? "true" : nil, .force: force ? "true" : nil, .segment: segment, .reference: reference,
        ])
    }

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

/// How the input is read (a demuxer or device, its options, an image sequence's rate) and live sources: capture
/// devices, network streams, the drop policy.
struct LiveOptions: ParsableArguments {
    @Flag(name: .setting(.live), help: .setting(.live)) var live = false
    @Option(name: .setting(.inputFormat), help: .setting(.inputFormat)) var inputFormat: String?
    @Option(name: .setting(.inputOption), help: .setting(.inputOption)) var inputOption: [String] = []
    @Option(name: .setting(.framerate), help: .setting(.framerate)) var framerate: String?
    @Option(name: .setting(.maxLatency), parsing: .unconditional, help: .setting(.maxLatency)) var maxLatency: String?
    @Option(name: .setting(.liveTimeout), parsing: .unconditional, help: .setting(.liveTimeout))
    var liveTimeout: String?
    @Option(name: .setting(.audioInput), help: .setting(.audioInput)) var audioInput: String?
    @Option(name: .setting(.audioInputOption), help: .setting(.audioInputOption)) var audioInputOption: [String] = []

    var settings: Settings {
        Settings([
            .live: live ? "true" : nil, .inputFormat: inputFormat, .framerate: framerate,
            .inputOption: inputOption.isEmpty ? nil : inputOption.joined(separator: "\n"), .maxLatency: maxLatency,
            .liveTimeout: liveTimeout, .audioInput: audioInput,
            .audioInputOption: audioInputOption.isEmpty ? nil : audioInputOption.joined(separator: "\n"),
        ])
    }

    func validate() throws { try settings.validate() }
}

/// How many cores to use.
struct EngineOptions: ParsableArguments {
    @Option(name: .setting(.threads), parsing: .unconditional, help: .setting(.threads)) var threads: String?
    @Option(name: .setting(.decoderThreads), parsing: .unconditional, help: .setting(.decoderThreads))
    var decoderThreads: String?
    @Option(name: .setting(.encoderThreads), parsing: .unconditional, help: .setting(.encoderThreads))
    var encoderThreads: String?
    @Option(name: .setting(.workers), parsing: .unconditional, help: .setting(.workers)) var workers: String?

    /// `cropzoom bench --frames N` passes this to each run: stop after N video frames (audio is
    /// not cut at that point, so it is not offered as a transcode option).
    @Option(name: .customLong("bench-frames"), help: .hidden)
    var benchFrames: Int?

    var settings: Settings {
        Settings([
            .threads: threads, .decoderThreads: decoderThreads, .encoderThreads: encoderThreads, .workers: workers,
        ])
    }

    func validate() throws {
        try settings.validate()
        if let benchFrames, benchFrames < 1 {
            throw ValidationError("--bench-frames takes a positive number (got \(benchFrames))")
        }
    }
}

extension NameSpecification {
    /// The setting's flag (`--pix-fmt`).
    static func setting(_ setting: Setting) -> NameSpecification { .customLong(setting.longName) }
}

extension CompletionKind {
    /// The words a setting takes, offered by the shell completions (`Setting.choices`); nil for free values.
    static func setting(_ setting: Setting) -> CompletionKind? { setting.choices.map { .list($0) } }
}

extension ArgumentHelp {
    /// The setting's help, other settings named by their flags, with its default when it has one.
    static func setting(_ setting: Setting) -> ArgumentHelp {
        var text = setting.help(naming: \.flag)
        if let value = setting.defaultText, !text.contains("default") { text += " (default: \(value))" }
        return ArgumentHelp(text, valueName: setting.valueName)
    }
}

extension Settings {
    /// Settings from options that may be absent.
    init(_ given: [Setting: String?]) {
        self.init(given.compactMapValues { $0 })
    }

    /// Refuses a value the library refuses, its message naming flags.
    func validate() throws {
        do throws(CropZoomError) {
            _ = try configuration(input: "", output: "")
        } catch {
            throw ValidationError(error.description(naming: \.flag))
        }
    }
}

extension CropZoomError {
    /// The one-line message of the command line: settings named by their flags.
    var message: String { description(naming: \.flag) }
}

extension TranscodeConfiguration.ProgressMode: ExpressibleByArgument {}
