/// The settings of a transcode that a person gives: one table from which the command line's options, the job
/// files' keys and the printing of changed settings are all made.
///
/// The raw value is the setting's key in job files and in the library's messages (`pix_fmt`); ``flag`` is its
/// command-line option (`--pix-fmt`). Values are text in every front end (a job file's numbers and lists are
/// written as the command line would write them); ``Settings`` parses and validates them into a
/// ``TranscodeConfiguration``.
public enum Setting: String, CaseIterable, Sendable, Codable, Hashable {
    // Geometry.
    case zoom, center, ease, background, crop, size, fit, rotate, transform, flip, scaler, kernel, deinterlace,
        orientation
    // Stabilisation.
    case stabilize
    case stabilizeSmoothing = "stabilize_smoothing"
    case stabilizeMode = "stabilize_mode"
    case stabilizeCrop = "stabilize_crop"
    case stabilizeBorder = "stabilize_border"
    // Reframing.
    case aspect, follow, preview
    case pathIn = "path_in"
    case pathOut = "path_out"
    // Trim.
    case start, end, duration
    case keepStartTime = "keep_start_time"
    // Encoding.
    case codec, crf, preset, bitrate
    case pixFmt = "pix_fmt"
    case toneMap = "tone_map"
    case profile, level, tune, gop, tag
    case encoderOption = "encoder_option"
    // Streams.
    case audio
    case audioCodec = "audio_codec"
    case audioBitrate = "audio_bitrate"
    case audioChannels = "audio_channels"
    case audioStream = "audio_stream"
    case streams
    // Input and output handling.
    case strict, force, reference
    // Live sources.
    case live
    case inputFormat = "input_format"
    case inputOption = "input_option"
    case framerate
    case maxLatency = "max_latency"
    case liveTimeout = "live_timeout"
    case audioInput = "audio_input"
    case audioInputOption = "audio_input_option"
    // Output.
    case segment
    // Engine: command-line only (a batch or a job file shares the machine's threads out itself).
    case threads
    case decoderThreads = "decoder_threads"
    case encoderThreads = "encoder_threads"
    case workers

    /// The key in job files and library messages.
    public var key: String { rawValue }

    /// The command-line option, `--` and the key with dashes.
    public var flag: String { "--" + rawValue.replacingOccurrences(of: "_", with: "-") }

    /// The option's long name (the flag without `--`).
    public var longName: String { String(flag.dropFirst(2)) }

    /// An on/off setting: a flag on the command line, `true`/`false` in a job file.
    public var isSwitch: Bool {
        self == .keepStartTime || self == .strict || self == .force || self == .live || self == .stabilize
    }

    /// A setting given any number of times (`--input-option K=V` …), its values one per line.
    public var isRepeatable: Bool {
        self == .inputOption || self == .audioInputOption || self == .encoderOption || self == .audioStream
    }

    /// Whether a job file may give it (clips and `defaults`).
    public var inJobFiles: Bool {
        switch self {
        case .threads, .decoderThreads, .encoderThreads, .workers, .force: return false
        default: return true
        }
    }

    /// The value when none is given, as text (nil: the setting is unset by default).
    public var defaultText: String? {
        switch self {
        case .zoom: return "1"
        case .center: return "0.5,0.5"
        case .ease: return Track.Ease.linear.rawValue
        case .background: return "black"
        case .rotate: return "0"
        case .scaler: return TranscodeConfiguration.Scaler.bicubic.rawValue
        case .kernel, .deinterlace, .orientation, .audio, .toneMap: return "auto"
        case .maxLatency: return "1"
        case .liveTimeout: return "5"
        // The stabiliser's refinements have defaults too (smooth, 1.1, crop), but none here: each implies
        // --stabilize, so arguments() must pass it on even at its default value.
        default: return nil
        }
    }

    /// The words a setting with a fixed set of values takes (nil for the others).
    public var choices: [String]? {
        switch self {
        case .ease: return Track.Ease.allCases.map(\.rawValue)
        case .flip: return GeometryRequest.Flip.allCases.map(\.rawValue)
        case .fit: return GeometryRequest.Fit.allCases.map(\.rawValue)
        case .scaler: return TranscodeConfiguration.Scaler.allCases.map(\.rawValue)
        case .kernel: return TranscodeConfiguration.Kernel.allCases.map(\.rawValue)
        case .deinterlace: return TranscodeConfiguration.Deinterlace.allCases.map(\.rawValue)
        case .orientation: return GeometryRequest.OrientationMode.allCases.map(\.rawValue)
        case .audio: return TranscodeConfiguration.AudioMode.allCases.map(\.rawValue)
        case .toneMap: return TranscodeConfiguration.ToneMap.allCases.map(\.rawValue)
        case .stabilizeMode: return Stabilization.Mode.allCases.map(\.rawValue)
        case .stabilizeBorder: return Stabilization.Border.allCases.map(\.rawValue)
        case .follow: return Reframing.Follow.allCases.map(\.rawValue)
        default: return nil
        }
    }

    /// What the value looks like in help (nil: the option's name in capitals).
    public var valueName: String? {
        switch self {
        case .zoom: return "Z"
        case .center: return "X,Y"
        case .background: return "FILL"
        case .crop: return "W:H[:X:Y]"
        case .size: return "WxH"
        case .rotate: return "DEGREES"
        case .transform: return "A,B,C,D,TX,TY"
        case .start, .end, .duration: return "T"
        case .bitrate, .audioBitrate: return "RATE"
        case .audioCodec: return "NAME"
        case .audioChannels: return "N|LAYOUT"
        case .audioStream: return "N|LANG"
        case .streams: return "KINDS"
        case .threads, .decoderThreads, .encoderThreads, .workers: return "N"
        case .inputFormat: return "NAME"
        case .framerate: return "FPS"
        case .inputOption, .audioInputOption, .encoderOption: return "KEY=VALUE"
        case .gop: return "FRAMES"
        case .tag: return "FOURCC"
        case .audioInput: return "FORMAT:DEVICE"
        case .segment: return "SECONDS"
        case .maxLatency, .liveTimeout, .stabilizeSmoothing: return "SECONDS"
        case .stabilizeCrop: return "MAX"
        case .aspect: return "W:H"
        case .pathIn, .pathOut, .preview, .reference: return "FILE"
        default: return nil
        }
    }

    /// One paragraph of help, other settings named as `name` gives them (flags on the command line).
    public func help(naming name: (Setting) -> String) -> String { Setting.render(helpText, naming: name) }

    private var helpText: String {
        switch self {
        case .zoom:
            return
                "Digital zoom around the centre (≥ 0.1; below 1 zooms out over \(setting: .background)), or keyframes "
                + "'TIMEs:Z, …' (e.g. '0s:1, 4s:1.65'); the output keeps the input's displayed size unless "
                + "\(setting: .size) "
                + "says otherwise."
        case .center:
            return "Centre of the zoom/crop window as fractions of the upright frame (the window is clamped inside "
                + "the picture), or keyframes 'TIMEs:X,Y, …'."
        case .ease: return "Between keyframes: linear, or smooth (continuous speed, no overshoot)."
        case .background:
            return "Around a zoomed-out, rotated or moved picture: black (default), white, gray, #RRGGBB, edge (the "
                + "picture's edge samples repeated outwards), blur (the picture scaled to cover the frame, "
                + "blurred), or cover (with \(setting: .rotate)/\(setting: .transform): zoom in just enough "
                + "that no corner shows)."
        case .crop:
            return
                "Crop window in pixels of the upright picture; centred (on \(setting: .center)) when X:Y is "
                + "omitted; or "
                + "keyframes 'TIMEs:W:H[:X:Y], …' (one aspect ratio)."
        case .size:
            return "Output size; -1 or -2 for one side keeps the aspect ratio (rounded to what the pixel format "
                + "needs, even for 4:2:0)."
        case .fit:
            return "How the picture meets a \(setting: .size) of another shape: stretch (default), contain (whole, "
                + "\(setting: .background) around it: black, blur …) or cover (cut to fill it, about "
                + "\(setting: .center))."
        case .rotate:
            return "Rotate clockwise after cropping: 90, 180 or 270 turn the frame; any other angle (e.g. 7.5 or -3) "
                + "or keyframes 'TIMEs:DEG, …' rotate the picture inside a frame of the same size, corners showing "
                + "--background."
        case .transform:
            return "A CGAffineTransform-style matrix in output pixels, applied last: the picture's point (x, y) "
                + "moves to (a·x + c·y + tx, b·x + d·y + ty); or keyframes 'TIMEs:A,B,C,D,TX,TY, …'."
        case .stabilize:
            return "Steady a handheld recording: the camera's motion is measured, a camera path chosen (holds, "
                + "constant pans and eases, L1-optimal) inside the room a slight zoom leaves, and every frame rendered "
                + "along it; the other geometry options apply on top. Frames, times and audio are kept. A live "
                + "source is steadied as it records: a causal path with a look-ahead of half \(setting: .maxLatency)."
        case .stabilizeSmoothing:
            return "The longest a correction may take before the path follows the camera (default: as long as the "
                + "zoom allows); implies \(setting: .stabilize)."
        case .stabilizeMode:
            return "smooth (default: holds, constant pans, eases) or tripod (one view held wherever the zoom "
                + "allows); implies \(setting: .stabilize)."
        case .stabilizeCrop:
            return "The most \(setting: .stabilize) may zoom in to hide the borders (1.0 to 2; default 1.1); each "
                + "frame is zoomed as little as the steadiness allows, the zoom changing slowly (at most 3 % a "
                + "second out, 9 % in). Implies \(setting: .stabilize)."
        case .stabilizeBorder:
            return "crop (default: zoomed just enough that no border shows) or fill (the picture at its own scale, "
                + "the uncovered corners showing \(setting: .background)); implies \(setting: .stabilize)."
        case .aspect:
            return "The output's shape, e.g. 9:16, 1:1 or 4:5: the window is the largest of that shape inside the "
                + "upright picture (tighter with \(setting: .zoom)), centred unless \(setting: .follow) moves it."
        case .follow:
            return "Move the \(setting: .aspect) window with the subject, frame by frame, as a camera operator would: "
                + "auto (faces where there are some, else what moves), faces, motion, or center (fixed). The path "
                + "holds still while the subject stays near the middle, pans smoothly and jumps only at cuts. A live "
                + "source is followed as it records, with a look-ahead of half \(setting: .maxLatency)."
        case .preview:
            return "Write a contact sheet (PNG): six frames with the \(setting: .follow) window drawn, beside what the "
                + "output shows there; implies \(setting: .follow) auto."
        case .pathIn:
            return "Render this path (CSV as \(setting: .pathOut) writes it, edited) instead of analysing: with "
                + "\(setting: .follow) the window per frame (time, x, y, width, height; rows may be deleted), else "
                + "the camera path of \(setting: .stabilize) (implied)."
        case .pathOut:
            return "Write the chosen path, a CSV row per frame: with \(setting: .follow) the window and the subject, "
                + "else the measured motion and camera path of \(setting: .stabilize) (implied)."
        case .flip: return "Mirror after rotating: horizontal or vertical."
        case .scaler: return "Scaling filter: bicubic, bilinear, lanczos, area, neighbor."
        case .kernel:
            return "Scaling library: auto (zimg for planar YUV and grey above 8 bits, swscale for 8-bit pictures and "
                + "the rest), zimg (fail where it cannot), swscale."
        case .deinterlace:
            return "auto: deinterlace the frames the decoder flags interlaced (one field kept, the other rebuilt "
                + "from it); on: every frame; off: none."
        case .orientation:
            return "auto: output upright as a player shows the input (rotation, mirror and pixel aspect applied); "
                + "ignore: work on the coded pixels and keep the input's display matrix and aspect."
        case .start:
            return "Start at this time from the beginning of the file: seconds (12.5) or [hh:]mm:ss[.mmm]. The first "
                + "frame kept is the first at or after it."
        case .end: return "Stop before this time (same forms as \(setting: .start))."
        case .duration: return "Keep this long from \(setting: .start) (instead of \(setting: .end))."
        case .keepStartTime:
            return "Keep the input's absolute timestamps (an MPEG-TS clock reading included) instead of starting "
                + "at 0."
        case .codec:
            return "Video encoder (libx264, libsvtav1 …) or codec as ffmpeg names it (h264, hevc/h265, vp9, av1, "
                + "prores …: the best installed encoder for it); default from the output container: libx264 for "
                + "mp4/mov/mkv/ts, libvpx-vp9 for webm; none (with --null) skips encoding."
        case .crf: return "Constant-quality value for the encoder (x264/x265 0–51, VP9 0–63)."
        case .preset: return "Encoder preset (x264/x265: ultrafast … veryslow)."
        case .bitrate: return "Target video bit rate, e.g. 4M or 800k."
        case .profile: return "Encoder profile (x264: baseline, main, high, high10 …; x265: main, main10 …)."
        case .level: return "Encoder level (H.264/HEVC: 3.1, 4.0, 5.1 …)."
        case .tune: return "Encoder tuning (x264/x265: film, animation, grain, zerolatency …)."
        case .gop: return "Longest distance between keyframes, in frames (ffmpeg's -g, x264's keyint)."
        case .tag: return "The video's four-character code in MP4/MOV (default hvc1 for HEVC; hev1, avc3 …)."
        case .encoderOption:
            return "An option of the encoder (repeatable): any of its AVOptions (crf=20, row-mt=1 …) or its own "
                + "parameter string (x264-params=…, x265-params=…, svtav1-params=…); an option it does not have is "
                + "refused, by name."
        case .toneMap:
            return "HDR (PQ, HLG) to SDR BT.709: auto maps when the output cannot carry HDR (8 bits, H.264 without "
                + "a 10-bit \(setting: .pixFmt), a codec or container with no HDR signalling), with BT.2390's curve; "
                + "bt2390, hable, reinhard map always with that curve; off never maps."
        case .pixFmt:
            return "Output pixel format (default: the input's when the encoder takes it, else the nearest one it "
                + "does)."
        case .audio:
            return "auto: copy every audio stream packet for packet, re-encoding (AAC, Opus for WebM) only what the "
                + "container cannot carry; copy: fail instead of re-encoding; aac: re-encode to AAC; none: drop "
                + "audio."
        case .audioCodec:
            return "Re-encode every audio stream with this encoder or codec (aac, opus, mp3, vorbis, flac, alac, ac3, "
                + "pcm_s16le …: the best installed encoder for it); copy is \(setting: .audio) copy."
        case .audioBitrate:
            return "Re-encode every audio stream at this bit rate (96k, 192k …; default 64k per channel, 128k for "
                + "stereo)."
        case .audioChannels:
            return "Re-encode every audio stream to this many channels or this layout (1, 2, 6, mono, stereo, 5.1 "
                + "…), mixing down or up; a note says so."
        case .audioStream:
            return "Keep this audio stream (repeatable): its number as probe shows it (#1 → 1) or its language "
                + "(eng, fra …); the others are dropped. Default: every audio stream."
        case .streams:
            return "Which input streams the output keeps, like ffmpeg's -map: video plus any of audio, subtitles, "
                + "data, cover, each with :LANG or :N to choose (video,audio:eng,subtitles:fra); the kinds not "
                + "named are dropped. Default: every stream the container holds."
        case .strict: return "Fail on damaged packets instead of skipping and counting them."
        case .force: return "Like -y, and replace a read-only OUTPUT too."
        case .reference:
            return "An input whose writer crashed before its index (moov) is repaired first with this complete "
                + "recording from the same camera and settings (as `cropzoom repair`)."
        case .live:
            return "Treat the input as a live source (a pipe, a growing stream): the reader never waits, late video "
                + "frames are dropped and counted, audio never; SIGINT/SIGTERM end the recording and keep it. Devices "
                + "and udp/rtp/srt/rtmp/tcp URLs (and .m3u8 over http) are live without it."
        case .inputFormat:
            return "Read the input with this demuxer or capture device: x11grab, v4l2, kmsgrab, pulse, alsa, lavfi, "
                + "or any FFmpeg input format (the input is then the device: :0.0, /dev/video0, default …)."
        case .inputOption:
            return "An option of the input format, device or protocol (repeatable): framerate=30, "
                + "video_size=1280x720, timeout=… ."
        case .framerate:
            return "Frame rate of an image sequence (frame_%04d.png, frame_*.png) or a raw stream, which carry none "
                + "(FFmpeg's default 25): 30, 29.97 or 30000/1001."
        case .maxLatency:
            return "Live: the most a video frame may lag behind its capture when a stage takes it; an older frame is "
                + "dropped and counted."
        case .liveTimeout:
            return "Live: end the recording when the source sends nothing for this long."
        case .audioInput:
            return "Live: record the sound from this capture device instead of the input's audio (pulse:default, "
                + "alsa:hw:0,0 …), read on its own thread and put on the video's clock."
        case .segment:
            return "Write a new file every SECONDS (OUTPUT names them with %d/%03d, else STEM-%03d.EXT), each starting "
                + "with a keyframe forced there and its times at 0; every packet goes into exactly one."
        case .audioInputOption:
            return "An option of the \(setting: .audioInput) device (repeatable): sample_rate=48000, channels=2 …"
        case .threads:
            return "Threads for the whole job (default: one per CPU this process may use: affinity, cgroup quota). "
                + "1 runs every stage, codecs included, on one thread."
        case .decoderThreads: return "Frame threads of the video decoder (default: the measured thread plan)."
        case .encoderThreads: return "Threads of the video encoder (default: the measured thread plan)."
        case .workers: return "Transform workers (default: the measured thread plan)."
        }
    }

    // MARK: References in messages

    /// The text standing for `setting` in a message, until a front end renders it.
    package static func marker(_ setting: Setting) -> String { "\u{E000}\(setting.rawValue)\u{E001}" }

    /// `text` with every setting reference written as `name` gives it.
    package static func render(_ text: String, naming name: (Setting) -> String) -> String {
        guard text.contains("\u{E000}") else { return text }
        var out = ""
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "\u{E000}") {
            out += rest[..<open]
            let after = rest.index(after: open)
            guard let close = rest[after...].firstIndex(of: "\u{E001}") else { break }
            let key = String(rest[after..<close])
            out += Setting(rawValue: key).map(name) ?? key
            rest = rest[rest.index(after: close)...]
        }
        return out + rest
    }
}
