// The end-to-end tests' input clips, made with the ffmpeg CLI from libavfilter's generators: one builder instead of an
// ffmpeg command line written out in every test.

import Foundation

/// A test clip made with the ffmpeg CLI from libavfilter's generators (`-f lavfi`): a picture (testsrc2 by default;
/// testsrc, smptebars, mandelbrot, nullsrc, a plain colour, or any graph), sound (a sine, noise, silence), more inputs
/// (a subtitle or chapter file), and the output's codecs and options; the path's extension picks the container.
///
/// ```swift
/// let input = try Clip.video(seconds: 2, size: "320x240", rate: 30)     // testsrc2 into libx264 unless .codec says
///     .audio(.sine(frequency: 440, sampleRate: 48_000)).audioCodec("aac")
///     .codec("libx264", pixelFormat: "yuv420p", preset: "ultrafast").gop(15)
///     .extra(["-movflags", "0"])                                        // anything else, before the output path
///     .write(in: scratch, name: "in.mp4")
/// ```
///
/// The command (``arguments(for:)``) is `ffmpeg -v error -nostdin -y`, the inputs in the order they were added (each
/// after its own input options), then the output options in this order: `-map`s, `-frames:v`, `-t`, the video codec
/// with its pixel format, preset, options and `-g`, the audio and subtitle codecs, colour tags, `-metadata`,
/// `-shortest`, ``extra(_:)``; then the path. A generator's `seconds` is its own `duration` (its input ends there);
/// ``duration(_:)`` and ``frames(_:)`` are the output's `-t` and `-frames:v`, for generators that run for ever.
/// Numbers are written as ffmpeg reads them: `1` for 1.0, `0.4` for 0.4.
struct Clip: Sendable {
    /// A picture generator (a libavfilter video source).
    enum Picture: Sendable {
        case testsrc
        case testsrc2
        case smptebars
        /// Takes no `duration`: end it with ``Clip/duration(_:)`` or ``Clip/frames(_:)``.
        case mandelbrot
        /// Pictures with no content (for a `filter` that draws them, e.g. `geq`).
        case nullsrc
        /// One colour (an ffmpeg colour name or `0xRRGGBB`).
        case color(String)

        var name: String {
            switch self {
            case .testsrc: "testsrc"
            case .testsrc2: "testsrc2"
            case .smptebars: "smptebars"
            case .mandelbrot: "mandelbrot"
            case .nullsrc: "nullsrc"
            case .color: "color"
            }
        }
    }

    /// A sound generator (a libavfilter audio source); each is mono unless said otherwise.
    enum Sound: Sendable {
        /// `sine`: a tone (440 Hz, 44.1 kHz by default); `samplesPerFrame` sets its frames' length.
        case sine(frequency: Int? = nil, sampleRate: Int? = nil, seconds: Double? = nil, samplesPerFrame: Int? = nil)
        /// `anoisesrc`: noise of a colour (white, pink, brown, …) at an amplitude (0…1), randomly seeded.
        case noise(color: String, amplitude: Double, seconds: Double? = nil)
        /// `anullsrc`: silence, stereo at 44.1 kHz unless `layout` and `sampleRate` say.
        case silence(layout: String? = nil, sampleRate: Int? = nil, seconds: Double? = nil)

        var graph: String {
            switch self {
            case .sine(let frequency, let sampleRate, let seconds, let samplesPerFrame):
                Clip.source(
                    "sine",
                    [
                        ("frequency", frequency.map(String.init)), ("sample_rate", sampleRate.map(String.init)),
                        ("samples_per_frame", samplesPerFrame.map(String.init)), ("duration", seconds.map(Clip.number)),
                    ])
            case .noise(let color, let amplitude, let seconds):
                Clip.source(
                    "anoisesrc",
                    [("color", color), ("amplitude", Clip.number(amplitude)), ("duration", seconds.map(Clip.number))])
            case .silence(let layout, let sampleRate, let seconds):
                Clip.source(
                    "anullsrc",
                    [
                        ("channel_layout", layout), ("sample_rate", sampleRate.map(String.init)),
                        ("duration", seconds.map(Clip.number)),
                    ])
            }
        }
    }

    /// One input: its input options, then `-f lavfi -i GRAPH` or `-i PATH`.
    private struct Input: Sendable {
        var options: [String]
        var lavfi: String?
        var path: String?

        var arguments: [String] {
            options + (lavfi.map { ["-f", "lavfi", "-i", $0] } ?? ["-i", path ?? ""])
        }
    }

    private var inputs: [Input] = []
    private var maps: [String] = []
    private var frameCount: Int?
    private var seconds: Double?
    private var videoCodec: String?
    private var pixelFormat: String?
    private var preset: String?
    private var codecOptions: [String] = []
    private var keyframeInterval: Int?
    private var audioCodecName: String?
    private var subtitleCodecName: String?
    private var colorTags: [String] = []
    private var metadataArguments: [String] = []
    private var endsWithShortest = false
    private var extraArguments: [String] = []

    // MARK: - Inputs

    /// A clip of `picture` (`seconds` long, `size` as `WxH`, `rate` frames a second; the generator's defaults where
    /// nil), then `filter` (a comma-separated filter chain, e.g. `format=rgb24`), encoded with libx264 unless
    /// ``codec(_:pixelFormat:preset:options:)`` says otherwise.
    static func video(
        _ picture: Picture = .testsrc2, seconds: Double? = nil, size: String? = nil, rate: Int? = nil,
        filter: String? = nil
    ) -> Clip {
        Clip().video(picture, seconds: seconds, size: size, rate: rate, filter: filter)
    }

    /// A clip of sound only: `sound`, then `filter` (e.g. `pan=5.1|…`, `aformat=channel_layouts=stereo`).
    static func audio(_ sound: Sound, filter: String? = nil, offset: Double? = nil) -> Clip {
        Clip().audio(sound, filter: filter, offset: offset)
    }

    /// A clip from a libavfilter graph as it is (e.g. several sources stacked); no codec is chosen for it.
    static func lavfi(_ graph: String) -> Clip {
        Clip().lavfi(graph)
    }

    /// Adds a picture input (the first one also makes libx264 the video codec unless one was chosen).
    func video(
        _ picture: Picture = .testsrc2, seconds: Double? = nil, size: String? = nil, rate: Int? = nil,
        filter: String? = nil
    ) -> Clip {
        var colour: String? = nil
        if case .color(let c) = picture { colour = c }
        let source = Self.source(
            picture.name,
            [
                ("color", colour), ("size", size), ("rate", rate.map(String.init)),
                ("duration", seconds.map(Self.number)),
            ])
        var clip = lavfi(source + (filter.map { "," + $0 } ?? ""))
        clip.videoCodec = videoCodec ?? "libx264"
        return clip
    }

    /// Adds a sound input: `sound`, then `filter`; `offset` seconds later than the others (`-itsoffset`).
    func audio(_ sound: Sound, filter: String? = nil, offset: Double? = nil) -> Clip {
        let options = offset.map { ["-itsoffset", Self.number($0)] } ?? []
        return lavfi(sound.graph + (filter.map { "," + $0 } ?? ""), options: options)
    }

    /// Adds a libavfilter graph as an input, as it is.
    func lavfi(_ graph: String, options: [String] = []) -> Clip {
        with { $0.inputs.append(Input(options: options, lavfi: graph, path: nil)) }
    }

    /// Adds a file as an input (a subtitle file, an FFMETADATA chapter file, a picture).
    func input(_ path: String, options: [String] = []) -> Clip {
        with { $0.inputs.append(Input(options: options, lavfi: nil, path: path)) }
    }

    // MARK: - Output options

    /// `-map` each of `specifiers` (e.g. `["0", "1"]`), in order: only those streams, in that order. Without it ffmpeg
    /// picks one stream of each kind.
    func map(_ specifiers: [String]) -> Clip { with { $0.maps += specifiers } }

    /// Ends the output after `count` video frames (`-frames:v`).
    func frames(_ count: Int) -> Clip { with { $0.frameCount = count } }

    /// Ends the output after `seconds` (`-t`).
    func duration(_ seconds: Double) -> Clip { with { $0.seconds = seconds } }

    /// The video codec (`-c:v`), its pixel format (`-pix_fmt`), preset (`-preset`) and other options (e.g.
    /// `["-qp", "0"]`).
    func codec(_ name: String, pixelFormat: String? = nil, preset: String? = nil, options: [String] = []) -> Clip {
        with {
            $0.videoCodec = name
            $0.pixelFormat = pixelFormat
            $0.preset = preset
            $0.codecOptions = options
        }
    }

    /// A keyframe at least every `frames` frames (`-g`).
    func gop(_ frames: Int) -> Clip { with { $0.keyframeInterval = frames } }

    /// The audio codec (`-c:a`; `copy` keeps the generator's PCM).
    func audioCodec(_ name: String) -> Clip { with { $0.audioCodecName = name } }

    /// The subtitle codec (`-c:s`).
    func subtitleCodec(_ name: String) -> Clip { with { $0.subtitleCodecName = name } }

    /// The colour tags of the video (`-color_primaries`, `-color_trc`, `-colorspace`), e.g. `bt2020`, `smpte2084`,
    /// `bt2020nc`.
    func colors(primaries: String, transfer: String, space: String) -> Clip {
        with { $0.colorTags = ["-color_primaries", primaries, "-color_trc", transfer, "-colorspace", space] }
    }

    /// A metadata tag `key=value`, of the file or of the streams `stream` names (e.g. `s:a:0`, `s:v:0`).
    func metadata(_ key: String, _ value: String, stream: String? = nil) -> Clip {
        with { $0.metadataArguments += ["-metadata" + (stream.map { ":" + $0 } ?? ""), "\(key)=\(value)"] }
    }

    /// Ends the output with its shortest stream (`-shortest`).
    func shortest() -> Clip { with { $0.endsWithShortest = true } }

    /// More output options, as they are, last before the path (e.g. `["-movflags", "0"]`).
    func extra(_ arguments: [String]) -> Clip { with { $0.extraArguments += arguments } }

    // MARK: - The command

    /// ffmpeg's arguments (without `ffmpeg`) that write the clip to `path`.
    func arguments(for path: String) -> [String] {
        var args = ["-v", "error", "-nostdin", "-y"]
        args += inputs.flatMap(\.arguments)
        args += maps.flatMap { ["-map", $0] }
        if let frameCount { args += ["-frames:v", "\(frameCount)"] }
        if let seconds { args += ["-t", Self.number(seconds)] }
        if let videoCodec { args += ["-c:v", videoCodec] }
        if let pixelFormat { args += ["-pix_fmt", pixelFormat] }
        if let preset { args += ["-preset", preset] }
        args += codecOptions
        if let keyframeInterval { args += ["-g", "\(keyframeInterval)"] }
        if let audioCodecName { args += ["-c:a", audioCodecName] }
        if let subtitleCodecName { args += ["-c:s", subtitleCodecName] }
        args += colorTags + metadataArguments
        if endsWithShortest { args.append("-shortest") }
        return args + extraArguments + [path]
    }

    /// Writes the clip to `path` (replacing a file there); throws with ffmpeg's command line and stderr when it fails.
    @discardableResult
    func write(to path: String) throws -> String {
        try Oracle.runChecked("ffmpeg", arguments(for: path))
        return path
    }

    /// Writes the clip to `name` in `scratch`; its path.
    @discardableResult
    func write(in scratch: Scratch, name: String) throws -> String {
        try write(to: scratch.file(name).path)
    }

    // MARK: - Private

    private func with(_ change: (inout Clip) -> Void) -> Clip {
        var copy = self
        change(&copy)
        return copy
    }

    /// `name=key=value:…` of the options that are set (`name` alone when none is).
    private static func source(_ name: String, _ options: [(String, String?)]) -> String {
        let set = options.compactMap { key, value in value.map { "\(key)=\($0)" } }
        return set.isEmpty ? name : name + "=" + set.joined(separator: ":")
    }

    /// `x` as ffmpeg reads it: whole numbers without a fraction (`1`, not `1.0`).
    static func number(_ x: Double) -> String {
        x == x.rounded() && abs(x) < 1e15 ? String(Int64(x)) : "\(x)"
    }
}
