import CFFmpeg
import CropZoomCore

/// The encode stage for the video stream (`avcodec_send_frame` / `avcodec_receive_packet`).
package final class VideoEncoder: @unchecked Sendable {
    // @unchecked Sendable: owned and driven by one thread (the encode stage).
    package let context: CodecContext
    package let timeBase: TimeBase
    package let pixelFormat: PixelFormat
    package let fullRange: Bool
    private let packet: Packet

    package struct Settings {
        package var codec: EncoderRef
        package var width: Int, height: Int
        package var pixelFormat: PixelFormat
        package var fullRange: Bool
        package var timeBase: TimeBase
        package var frameRate: Rational
        package var sampleAspect: Rational
        /// The input stream whose colour description (range, matrix, primaries, transfer, chroma siting) the
        /// output keeps.
        package var colorSource: StreamRef
        /// The picture was tone mapped to SDR: BT.709 primaries, transfer and matrix, whatever the input's.
        package var sdr = false
        package var globalHeader: Bool
        package var threads: Int
        package var crf: Double?
        package var preset: String?
        package var bitrate: Int?
        /// `--profile`, `--level`, `--tune`, `--gop`, `--encoder-option`.
        package var tuning = Tuning()
        package var path: String
        /// HDR10 static metadata for the encoder (x265's `master-display`/`max-cll`).
        package var hdr: HDRMetadata? = nil
        /// Let codec libraries that print their own log (x265, SVT-AV1) print it (`--verbose`).
        package var verbose = false
        /// Live: the most frames the encoder may hold back to look ahead (x264/x265 `rc-lookahead`, libvpx
        /// `lag-in-frames`), so that its own buffer stays within the latency bound; nil: the encoder's default.
        package var lookahead: Int? = nil
        /// Keyframes are forced (`--segment`): x264/x265 make them IDR frames (`forced-idr`), which nothing after
        /// refers back past.
        package var forcedKeyframes = false

        package init(
            codec: EncoderRef, width: Int, height: Int, pixelFormat: PixelFormat, fullRange: Bool, timeBase: TimeBase,
            frameRate: Rational, sampleAspect: Rational, colorSource: StreamRef, sdr: Bool = false, globalHeader: Bool,
            threads: Int, crf: Double?, preset: String?, bitrate: Int?, tuning: Tuning = Tuning(), path: String,
            hdr: HDRMetadata? = nil, verbose: Bool = false, lookahead: Int? = nil, forcedKeyframes: Bool = false
        ) {
            self.codec = codec
            self.width = width
            self.height = height
            self.pixelFormat = pixelFormat
            self.fullRange = fullRange
            self.timeBase = timeBase
            self.frameRate = frameRate
            self.sampleAspect = sampleAspect
            self.colorSource = colorSource
            self.sdr = sdr
            self.globalHeader = globalHeader
            self.threads = threads
            self.crf = crf
            self.preset = preset
            self.bitrate = bitrate
            self.tuning = tuning
            self.path = path
            self.hdr = hdr
            self.verbose = verbose
            self.lookahead = lookahead
            self.forcedKeyframes = forcedKeyframes
        }
    }

    /// SVT_LOG as the user set it, read before cropzoom sets it.
    private static let userSVTLog: String? = getenv("SVT_LOG").map { String(cString: $0) }

    /// SVT-AV1 writes its log (a banner on every open) straight to stderr at the level in the
    /// SVT_LOG environment variable, read when an encoder is made: -1 silences it (`setenv`);
    /// `verbose` restores what the user had. (x265's is its `log-level` parameter.)
    package static func setSVTLog(verbose: Bool) {
        let user = userSVTLog
        if !verbose {
            setenv("SVT_LOG", "-1", 1)
        } else if let user {
            setenv("SVT_LOG", user, 1)
        } else {
            unsetenv("SVT_LOG")
        }
    }

    /// Picks the encoder: the one named, or the container's natural choice (H.264 for
    /// mp4/mov/mkv/ts, VP9 for WebM), or where the container cannot hold those its own codec
    /// (`AVOutputFormat.video_codec`, `avcodec_find_encoder`: GIF, APNG, MPEG-2 for MXF, Theora for
    /// Ogg, wrapped frames for y4m).
    package static func findCodec(named name: String?, output: OutputFormat) throws(CropZoomError) -> EncoderRef {
        EncoderRef(try findEncoder(named: name, output: output))
    }

    private static func findEncoder(named name: String?, output: OutputFormat) throws(CropZoomError)
        -> UnsafePointer<AVCodec>
    {
        if let name {
            guard let c = try encoder(named: name) else {
                throw CropZoomError(
                    .usage, setting: .codec,
                    reason: "\(setting: .codec) \(name): no such video encoder or codec in this FFmpeg (try `ffmpeg "
                        + "-encoders`)")
            }
            guard output.canStore(c.pointee.id) else {
                throw CropZoomError(
                    .usage, path: output.displayPath,
                    reason: "the \(output.formatName) container cannot hold \(name) video")
            }
            return c
        }
        // An image sequence takes the codec its extension names (`av_guess_codec`: PNG for .png,
        // MJPEG for .jpg …); image2 would also store MPEG-4 frames under a .png name.
        if output.formatName.hasPrefix("image2") {
            let id = RawPath.withCString(output.displayPath) {
                av_guess_codec(output.outputFormat, nil, $0, nil, AVMEDIA_TYPE_VIDEO)
            }
            if id != AV_CODEC_ID_NONE, let c = avcodec_find_encoder(id) { return c }
        }
        let preferred: [String] =
            output.formatName == "webm" ? ["libvpx-vp9", "libaom-av1"] : ["libx264", "libx265", "mpeg4"]
        for n in preferred {
            if let c = avcodec_find_encoder_by_name(n), output.canStore(c.pointee.id) { return c }
        }
        let id = output.outputFormat.pointee.video_codec
        if id != AV_CODEC_ID_NONE, let c = avcodec_find_encoder(id) { return c }
        throw CropZoomError(
            .usage, path: output.displayPath,
            setting: .codec,
            reason: "no video encoder for the \(output.formatName) container (name one with \(setting: .codec))")
    }

    /// What the user tunes beyond quality and speed.
    package struct Tuning {
        package var profile: String? = nil
        package var level: String? = nil
        package var tune: String? = nil
        package var gop: Int? = nil
        /// The encoder's own options, applied after cropzoom's (so they override them).
        package var options: [String: String] = [:]

        package init(
            profile: String? = nil, level: String? = nil, tune: String? = nil, gop: Int? = nil,
            options: [String: String] = [:]
        ) {
            self.profile = profile
            self.level = level
            self.tune = tune
            self.gop = gop
            self.options = options
        }
    }

    /// x264's preset names on the speed settings of encoders that have no named presets, slowest to fastest
    /// (placebo … ultrafast): libvpx's `cpu-used` (its `realtime` deadline for the three fastest), SVT-AV1's
    /// `preset`, libaom's `cpu-used`, rav1e's `speed`.
    package static let presetScale: [String: (key: String, values: [Int])] = [
        "libvpx-vp9": ("cpu-used", [0, 0, 1, 2, 3, 4, 5, 6, 7, 8]),
        "libvpx": ("cpu-used", [0, 0, 1, 2, 3, 4, 5, 6, 7, 8]),
        "libsvtav1": ("preset", [0, 2, 4, 6, 8, 9, 10, 11, 12, 13]),
        "libaom-av1": ("cpu-used", [0, 1, 2, 3, 4, 5, 6, 7, 8, 8]),
        "librav1e": ("speed", [0, 1, 2, 4, 6, 7, 8, 9, 10, 10]),
    ]

    /// The encoder options `--preset` stands for: the preset itself for x264/x265 (and any encoder with a
    /// `preset` option), else the speed setting ``presetScale`` maps it to; a number is that encoder's own
    /// speed value. An unknown name is refused, listing the names.
    package static func presetOptions(_ preset: String, encoder name: String) throws(CropZoomError) -> [String: String]
    {
        guard let scale = presetScale[name] else { return ["preset": preset] }
        if let n = Int(preset) { return [scale.key: String(n)] }
        let slowestFirst = Array(x26xPresets.reversed())
        guard let i = slowestFirst.firstIndex(of: preset) else {
            throw CropZoomError(
                .usage, setting: .preset,
                reason: "\(setting: .preset) \(preset): for \(name), one of \(x26xPresets.joined(separator: ", ")) or "
                    + "its own \(scale.key) number")
        }
        var options = [scale.key: String(scale.values[i])]
        if name.hasPrefix("libvpx") { options["deadline"] = i >= 7 ? "realtime" : "good" }
        return options
    }

    /// The encoders cropzoom prefers for a codec named as ffmpeg's `-c:v` names it (`h264`, `hevc`, `av1` …), best
    /// first; other software encoders of the codec follow.
    package static let preferredEncoders: [String: [String]] = [
        "h264": ["libx264"], "hevc": ["libx265"], "vp9": ["libvpx-vp9"], "vp8": ["libvpx"],
        "av1": ["libsvtav1", "libaom-av1", "librav1e"], "prores": ["prores_ks", "prores_aw", "prores"],
        "mpeg4": ["mpeg4", "libxvid"], "mjpeg": ["mjpeg"], "theora": ["libtheora"],
    ]

    /// Other spellings of codec names people type.
    package static let codecAliases: [String: String] = ["h265": "hevc", "avc": "h264", "x264": "h264", "x265": "hevc"]

    /// The video encoder `name` names (`avcodec_find_encoder_by_name`), or the best installed software encoder of
    /// the codec it names (`avcodec_descriptor_get_by_name`, `av_codec_iterate`): nil when neither. A codec this
    /// FFmpeg knows but cannot encode is refused by name.
    private static func encoder(named given: String) throws(CropZoomError) -> UnsafePointer<AVCodec>? {
        let name = codecAliases[given.lowercased()] ?? given.lowercased()
        // A codec name first (`prores` is also the name of FFmpeg's plainer ProRes encoder: prores_ks is preferred).
        for n in preferredEncoders[name] ?? [] {
            if let c = avcodec_find_encoder_by_name(n) { return c }
        }
        if let c = avcodec_find_encoder_by_name(given), av_codec_is_encoder(c) != 0,
            c.pointee.type == AVMEDIA_TYPE_VIDEO
        {
            return c
        }
        guard let descriptor = avcodec_descriptor_get_by_name(name), descriptor.pointee.type == AVMEDIA_TYPE_VIDEO
        else { return nil }
        // Hardware encoders need their device: only software ones are picked by codec name.
        var state: UnsafeMutableRawPointer? = nil
        while let c = av_codec_iterate(&state) {
            guard av_codec_is_encoder(c) != 0, c.pointee.id == descriptor.pointee.id else { continue }
            if c.pointee.capabilities & AV_CODEC_CAP_HARDWARE != 0 { continue }
            let n = String(cString: c.pointee.name)
            let hardware = [
                "_nvenc", "_qsv", "_vaapi", "_v4l2m2m", "_omx", "_amf", "_videotoolbox", "_mf", "_mediacodec",
            ]
            if hardware.contains(where: n.hasSuffix) { continue }
            return c
        }
        throw CropZoomError(
            .usage, setting: .codec,
            reason: "\(setting: .codec) \(given): this FFmpeg has no \(String(cString: descriptor.pointee.name)) "
                + "encoder (try `ffmpeg -encoders`)")
    }

    /// The pixel format to encode: `requested`, else the input's when the encoder takes it, else
    /// the nearest one it does (`avcodec_find_best_pix_fmt_of_list`).
    package static func choosePixelFormat(
        codec encoder: EncoderRef, input: PixelFormat, requested: String?, hdr: Bool = false, profile: String? = nil
    ) throws(CropZoomError) -> PixelFormat {
        if requested == nil,
            let playable = playableFormat(codec: encoder.pointer, input: input.av, hdr: hdr, profile: profile)
        {
            return PixelFormat(playable)
        }
        return PixelFormat(try choosePixelFormat(codec: encoder.pointer, input: input.av, requested: requested))
    }

    /// Whether `codec` encodes 4:2:0 and 4:2:2 pictures of odd width or height (chroma planes rounded up): VP8,
    /// VP9 and AV1 (libvpx, libaom, rav1e) and FFV1 do; H.264 and HEVC need even sides there.
    package static func takesOddSizes(_ codec: EncoderRef) -> Bool {
        ["libvpx", "libvpx-vp9", "libaom-av1", "librav1e", "ffv1"].contains(codec.name)
    }

    /// The encoders whose default output is what players take rather than the input's format.
    package static let playableDefaultEncoders: Set<String> = ["libx264", "libx265"]

    /// For H.264 and HEVC (libx264, libx265) without `--pix-fmt`: what every player decodes — 4:2:0, 8 bits for
    /// H.264 (High) and for 8-bit input to HEVC (Main), 10 bits for deeper input to HEVC (Main 10) and for HDR
    /// input to either (8-bit PQ/HLG bands); full range kept as `yuvj420p` at 8 bits. A `--profile` that names
    /// more is the user's ask: `high10`/`main10` 10 bits, `high422`/`main422-10` 4:2:2, `high444`/`main444-…`
    /// 4:4:4, at the input's depth when the profile does not say. Nil for other encoders, or when the encoder does
    /// not take the result.
    private static func playableFormat(
        codec: UnsafePointer<AVCodec>, input: AVPixelFormat, hdr: Bool, profile: String?
    ) -> AVPixelFormat? {
        let name = String(cString: codec.pointee.name)
        // VP9's numbered profiles each fix the sampling and depth: 0 4:2:0 8-bit, 1 4:4:4 8-bit, 2 4:2:0 10-bit, 3
        // 4:4:4 10-bit (libvpx refuses a picture its profile does not allow).
        if name == "libvpx-vp9", let p = profile, let n = try? numberedProfile(p, encoder: name) {
            let formatName = ["yuv420p", "yuv444p", "yuv420p10le", "yuv444p10le"][n]
            guard let format = PixelFormatInfo(name: formatName)?.format, codec.supportedPixelFormats.contains(format)
            else { return nil }
            return format
        }
        guard playableDefaultEncoders.contains(name), let info = PixelFormatInfo(input) else { return nil }
        let inputDepth = info.isRGB ? 8 : info.bitDepth
        var depth = hdr || (name == "libx265" && inputDepth > 8) ? 10 : 8
        var chroma = "420"
        if let p = profile?.lowercased() {
            if p.contains("444") {
                chroma = "444"
            } else if p.contains("422") {
                chroma = "422"
            }
            if p.hasSuffix("12") {
                depth = 12
            } else if p.contains("10") {
                depth = 10
            } else if p.hasSuffix("-8") {
                depth = 8
            } else if chroma != "420" {
                depth = min(max(inputDepth, 8), 10)
            }
        }
        let full = info.isJ && depth == 8
        let formatName = "yuv\(full ? "j" : "")\(chroma)p" + (depth > 8 ? "\(depth)le" : "")
        guard let format = PixelFormatInfo(name: formatName)?.format, codec.supportedPixelFormats.contains(format)
        else { return nil }
        return format
    }

    /// The encoder an HDR (PQ, HLG) input gets without `--codec` where the container's default would be H.264:
    /// libx265, whose Main 10 players show as HDR. Nil when it is missing or the container cannot hold HEVC.
    package static func hdrDefault(output: OutputFormat) -> EncoderRef? {
        guard output.canStore(AV_CODEC_ID_HEVC), let c = avcodec_find_encoder_by_name("libx265") else { return nil }
        return EncoderRef(c)
    }

    private static func choosePixelFormat(
        codec: UnsafePointer<AVCodec>, input: AVPixelFormat, requested: String?
    ) throws(CropZoomError) -> AVPixelFormat {
        let supported = codec.supportedPixelFormats
        let name = String(cString: codec.pointee.name)
        if let requested {
            guard let info = PixelFormatInfo(name: requested) else {
                throw CropZoomError(
                    .usage, setting: .pixFmt, reason: "\(setting: .pixFmt) \(requested): unknown pixel format")
            }
            guard supported.isEmpty || supported.contains(info.format) else {
                let list = supported.map(pixelFormatName).joined(separator: ", ")
                throw CropZoomError(
                    .usage, setting: .pixFmt, reason: "\(setting: .pixFmt) \(requested): \(name) takes only \(list)")
            }
            return info.format
        }
        if supported.isEmpty || supported.contains(input) {
            // MJPEG takes limited-range formats only with -strict unofficial: give it full range.
            if codec.pointee.id == AV_CODEC_ID_MJPEG, let info = PixelFormatInfo(input), !info.isJ {
                let j = [AV_PIX_FMT_YUVJ420P, AV_PIX_FMT_YUVJ422P, AV_PIX_FMT_YUVJ444P]
                    .first {
                        PixelFormatInfo($0)!.log2ChromaW == info.log2ChromaW
                            && PixelFormatInfo($0)!.log2ChromaH == info.log2ChromaH
                    }
                if let j, supported.contains(j) { return j }
            }
            return input
        }
        // A "J" (full-range) format becomes its plain twin, keeping the range as a tag.
        if let info = PixelFormatInfo(input), info.isJ, supported.contains(info.unJ) { return info.unJ }
        var list = supported + [AV_PIX_FMT_NONE]
        let best = list.withUnsafeMutableBufferPointer { buf in
            avcodec_find_best_pix_fmt_of_list(
                buf.baseAddress, input, PixelFormatInfo(input)?.hasAlpha == true ? 1 : 0, nil)
        }
        return best == AV_PIX_FMT_NONE ? supported[0] : best
    }

    /// The matrix to label the output with (and to convert RGB with): GBR for RGB output; BT.709
    /// for YUV from RGB input (`color_space` gbr or an RGB pixel format: FFV1 RGB, libx264rgb,
    /// VP9 RGB); else the input's.
    package static func matrix(inputSpace: ColorMatrix, inputFormat: PixelFormat, output: PixelFormat) -> ColorMatrix {
        if output.info?.isRGB == true { return ColorMatrix(AVCOL_SPC_RGB) }
        if inputSpace == ColorMatrix(AVCOL_SPC_RGB) || inputFormat.info?.isRGB == true {
            return ColorMatrix(AVCOL_SPC_BT709)
        }
        return inputSpace
    }

    /// The encoder's time base: the input stream's, so every frame keeps its timestamp exactly,
    /// except for codecs that cannot take it — MPEG-4 part 2 / H.263 limit the denominator to
    /// 65535 (the largest divisor of the input's that fits is used), MPEG-1/2 need a standard
    /// frame rate (those are constant-rate formats; 1/frame rate is used), and so does Theora (libtheora
    /// takes the time base for the frame rate, and Ogg's granule positions count frames).
    static func timeBase(for codec: UnsafePointer<AVCodec>, input: AVRational, frameRate: AVRational) -> AVRational {
        switch codec.pointee.id {
        case AV_CODEC_ID_MPEG1VIDEO, AV_CODEC_ID_MPEG2VIDEO, AV_CODEC_ID_THEORA:
            return frameRate.num > 0 && frameRate.den > 0 ? av_inv_q(frameRate) : AVRational(num: 1, den: 25)
        case AV_CODEC_ID_MPEG4, AV_CODEC_ID_H263, AV_CODEC_ID_H263P, AV_CODEC_ID_MSMPEG4V2, AV_CODEC_ID_MSMPEG4V3,
            AV_CODEC_ID_FLV1:
            guard input.den > 65535 else { return input }
            var d = Int32(65535)
            while d > 1 && input.den % d != 0 { d -= 1 }
            return AVRational(num: input.num, den: d)
        default:
            return input
        }
    }

    /// Whether MPEG-1 (`mpeg2` false) or MPEG-2 video can signal `rate` exactly, as FFmpeg's encoder
    /// requires: one of the eight MPEG rates (23.976 … 60), for MPEG-2 times (n+1)/(d+1) with n < 4,
    /// d < 32 (its frame_rate_extension).
    static func mpegFrameRateFits(_ rate: AVRational, mpeg2: Bool) -> Bool {
        let table: [(num: Int64, den: Int64)] = [
            (24000, 1001), (24, 1), (25, 1), (30000, 1001), (30, 1),
            (50, 1), (60000, 1001), (60, 1),
        ]
        guard rate.num > 0 && rate.den > 0 else { return false }
        for t in table {
            for n in 1...(mpeg2 ? 4 : 1) {
                for d in 1...(mpeg2 ? 32 : 1) {
                    if Int64(rate.num) * t.den * Int64(d) == Int64(rate.den) * t.num * Int64(n) { return true }
                }
            }
        }
        return false
    }

    /// x264's lookahead threads for `threads` encoder threads on pictures `height` pixels high,
    /// where cropzoom overrides x264's own choice; nil keeps x264's.
    ///
    /// x264 gives its lookahead (frame-type decisions, macroblock-tree) `threads / 3` threads at
    /// the fast presets — below 6 threads a single, serial lookahead thread, which becomes the
    /// bottleneck on a small machine. cropzoom gives it as many threads as the encoder has, up to
    /// 5, capped as x264 caps its own choice (one per 128 rows: each lookahead thread analyses a
    /// horizontal slice). Measured on 2 cores with 3 threads (Benchmarks/README.md, "x264's
    /// lookahead"): 1080p veryfast 19 % faster at 13 % less CPU and the same memory; the stream
    /// costs about 0.4 % more bits for the same PSNR (2 lookahead threads: 14 %, 0.2 %).
    static func x264LookaheadThreads(threads: Int, height: Int) -> Int? {
        guard (2..<6).contains(threads) else { return nil }
        let n = min(threads, height / 128)
        return n >= 2 ? n : nil
    }

    /// The `--crf` values `codec` takes: its "crf" AVOption's range where that is bounded (libvpx,
    /// libaom, SVT-AV1: 0–63; the option's -1 means "unset"), else the encoder's own (x264/x265
    /// declare -1…FLT_MAX and clamp to 51); nil for an encoder without a known range.
    static func crfRange(_ codec: UnsafePointer<AVCodec>) -> ClosedRange<Double>? {
        var cls = codec.pointee.priv_class
        let option =
            cls == nil
            ? nil
            : withUnsafeMutablePointer(to: &cls) {
                av_opt_find(UnsafeMutableRawPointer($0), "crf", nil, 0, AV_OPT_SEARCH_FAKE_OBJ)
            }
        if let option, option.pointee.max < 1000 { return max(0, option.pointee.min)...option.pointee.max }
        return ["libx264", "libx264rgb", "libx265"].contains(String(cString: codec.pointee.name)) ? 0...51 : nil
    }

    /// Encoders that use `--crf` and `--bitrate` together (constrained quality: the quality,
    /// capped at the bit rate); every other encoder would ignore one of them.
    static let constrainedQuality: Set<String> = ["libvpx", "libvpx-vp9", "libaom-av1"]

    /// Refuses rate settings `codec` would clamp or ignore: a `--crf` outside its range, `--crf`
    /// with `--bitrate` (but for constrained quality), `--bitrate` for a lossless-only encoder.
    static func checkRateControl(codec: UnsafePointer<AVCodec>, crf: Double?, bitrate: Int?) throws(CropZoomError) {
        let name = String(cString: codec.pointee.name)
        let props = avcodec_descriptor_get(codec.pointee.id)?.pointee.props ?? 0
        if bitrate != nil && props & AV_CODEC_PROP_LOSSLESS != 0 && props & AV_CODEC_PROP_LOSSY == 0 {
            throw CropZoomError(
                .usage, setting: .bitrate,
                reason: "\(setting: .bitrate): \(name) is lossless and has no bit rate to set")
        }
        if let crf, let range = crfRange(codec), !range.contains(crf) {
            let f = { (v: Double) in String(format: "%g", v) }
            let takes = "\(f(range.lowerBound))–\(f(range.upperBound))"
            throw CropZoomError(.usage, setting: .crf, reason: "\(setting: .crf) \(f(crf)): \(name) takes \(takes)")
        }
        if crf != nil && bitrate != nil && !constrainedQuality.contains(name) {
            throw CropZoomError(
                .usage, setting: .crf,
                reason: "use one of \(setting: .crf) or \(setting: .bitrate): \(name) would ignore one of them")
        }
    }

    /// The presets x264 and x265 know (`x264_preset_names`, `x265_preset_names`).
    /// x264's tunes (one of the first six, with fastdecode and zerolatency added by `,` or `+`) and profiles, each
    /// profile with the deepest bits and the most chroma it takes.
    static let x264Tunes = ["film", "animation", "grain", "stillimage", "psnr", "ssim", "fastdecode", "zerolatency"]
    static let x264Profiles: [(name: String, depth: Int, chroma: String)] = [
        ("baseline", 8, "4:2:0"), ("main", 8, "4:2:0"), ("high", 8, "4:2:0"), ("high10", 10, "4:2:0"),
        ("high422", 10, "4:2:2"), ("high444", 10, "4:4:4"),
    ]

    /// x264 reports a tune or profile it refuses on stderr itself (`x264 [error]: invalid tune`), whatever
    /// FFmpeg's log level: they are checked here first, as is a profile that cannot hold the picture's format,
    /// so that the error is one line, cropzoom's.
    static func checkX264(_ t: Tuning, format: PixelFormat) throws(CropZoomError) {
        if let tune = t.tune {
            let parts = tune.lowercased().split(whereSeparator: { $0 == "," || $0 == "+" }).map(String.init)
            if parts.isEmpty || !parts.allSatisfy(x264Tunes.contains) {
                throw CropZoomError(
                    .usage, setting: .tune,
                    reason: "\(setting: .tune) \(tune): libx264 takes \(x264Tunes.joined(separator: ", ")) "
                        + "(fastdecode and zerolatency may be added with a comma)")
            }
        }
        guard let profile = t.profile?.lowercased() else { return }
        guard let p = x264Profiles.first(where: { $0.name == profile }) else {
            throw CropZoomError(
                .usage, setting: .profile,
                reason: "\(setting: .profile) \(profile): libx264 takes "
                    + x264Profiles.map(\.name).joined(separator: ", "))
        }
        guard let info = format.info else { return }
        let chroma = info.log2ChromaH > 0 ? "4:2:0" : info.log2ChromaW > 0 ? "4:2:2" : "4:4:4"
        let order = ["4:2:0", "4:2:2", "4:4:4"]
        if info.bitDepth > p.depth || order.firstIndex(of: chroma)! > order.firstIndex(of: p.chroma)! {
            let fits = x264Profiles.first {
                $0.depth >= info.bitDepth && order.firstIndex(of: $0.chroma)! >= order.firstIndex(of: chroma)!
            }
            throw CropZoomError(
                .usage, setting: .profile,
                reason: "\(setting: .profile) \(profile) holds \(p.chroma) at \(p.depth) bits, not \(format.name) "
                    + "(\(chroma), \(info.bitDepth) bits): use "
                    + (fits.map { "\(setting: .profile) \($0.name) or " } ?? "")
                    + "\(setting: .pixFmt) yuv420p")
        }
    }

    static let x26xPresets = [
        "ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow", "placebo",
    ]

    package init(_ s: Settings) throws(CropZoomError) {
        let id = s.codec.pointer.pointee.id
        if id == AV_CODEC_ID_MPEG1VIDEO || id == AV_CODEC_ID_MPEG2VIDEO,
            !VideoEncoder.mpegFrameRateFits(s.frameRate.rational, mpeg2: id == AV_CODEC_ID_MPEG2VIDEO)
        {
            let name = s.codec.name
            let fps = String(format: "%.3f", s.frameRate.value)
            throw CropZoomError(
                .usage, path: s.path,
                setting: .codec,
                reason: "\(name) video takes only the MPEG frame rates (23.976, 24, 25, 29.97, 30, "
                    + "50, 59.94, 60); the input's is \(fps) fps (choose another container or \(setting: .codec))")
        }
        context = try CodecContext(codec: s.codec.pointer, path: s.path)
        let c = context.pointer
        c.pointee.width = Int32(s.width)
        c.pointee.height = Int32(s.height)
        c.pointee.pix_fmt = s.pixelFormat.av
        c.pointee.time_base = VideoEncoder.timeBase(
            for: s.codec.pointer, input: s.timeBase.rational, frameRate: s.frameRate.rational)
        c.pointee.framerate = s.frameRate.rational
        c.pointee.sample_aspect_ratio = s.sampleAspect.rational
        let cp = s.colorSource.parameters.pointee
        c.pointee.color_range =
            s.fullRange
            ? AVCOL_RANGE_JPEG
            : (cp.color_range == AVCOL_RANGE_UNSPECIFIED ? AVCOL_RANGE_UNSPECIFIED : AVCOL_RANGE_MPEG)
        let inputFormat = PixelFormat(AVPixelFormat(rawValue: cp.format))
        c.pointee.colorspace =
            VideoEncoder.matrix(
                inputSpace: ColorMatrix(s.sdr ? AVCOL_SPC_BT709 : cp.color_space), inputFormat: inputFormat,
                output: s.pixelFormat
            )
            .av
        c.pointee.color_primaries = s.sdr ? AVCOL_PRI_BT709 : cp.color_primaries
        c.pointee.color_trc = s.sdr ? AVCOL_TRC_BT709 : cp.color_trc
        c.pointee.chroma_sample_location = cp.chroma_location
        c.pointee.thread_count = Int32(s.threads)
        c.pointee.thread_type = FF_THREAD_FRAME | FF_THREAD_SLICE
        if s.globalHeader { c.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER }

        let name = context.name
        // x264 and x265 refuse an unknown preset only inside the encoder's open, as EINVAL with
        // their own log line: name the option instead.
        if let preset = s.preset, name == "libx264" || name == "libx265", !VideoEncoder.x26xPresets.contains(preset) {
            throw CropZoomError(
                .usage,
                setting: .preset,
                reason:
                    "\(setting: .preset) \(preset): \(name) presets are "
                    + "\(VideoEncoder.x26xPresets.joined(separator: ", "))"
            )
        }
        if name == "libx264" { try VideoEncoder.checkX264(s.tuning, format: s.pixelFormat) }
        try VideoEncoder.checkRateControl(codec: s.codec.pointer, crf: s.crf, bitrate: s.bitrate)
        var options: [String: String] = [:]
        if let crf = s.crf { options["crf"] = String(crf) }
        if let preset = s.preset {
            for (key, value) in try VideoEncoder.presetOptions(preset, encoder: name) { options[key] = value }
        }
        if let b = s.bitrate { c.pointee.bit_rate = Int64(b) }
        if name == "libvpx-vp9" || name == "libvpx" {
            if s.crf == nil && s.bitrate == nil { options["crf"] = "32" }
            if s.bitrate == nil { c.pointee.bit_rate = 0 }
            options["row-mt"] = "1"
            options["deadline"] = options["deadline"] ?? "good"
            options["cpu-used"] = options["cpu-used"] ?? "4"
        }
        if name == "libx265" {
            let log = s.verbose ? "log-level=info" : "log-level=none"
            let live = s.lookahead.map { ["rc-lookahead=\(max(1, $0))"] } ?? []
            options["x265-params"] = ([log] + (s.hdr?.x265Params ?? []) + live).joined(separator: ":")
        }
        if name == "libsvtav1" { VideoEncoder.setSVTLog(verbose: s.verbose) }
        if name == "libx264", let lookahead = VideoEncoder.x264LookaheadThreads(threads: s.threads, height: s.height) {
            options["x264-params"] = "lookahead-threads=\(lookahead)"
        }
        if s.forcedKeyframes && (name == "libx264" || name == "libx265") { options["forced-idr"] = "1" }
        if let n = s.lookahead {
            if name == "libx264" { options["rc-lookahead"] = "\(n)" }
            if name == "libvpx-vp9" || name == "libvpx" { options["lag-in-frames"] = "\(n)" }
        }
        let t = s.tuning
        // Profile, level and tune go to the encoder's own options of those names (`av_opt_find` on its private
        // context); x265 takes its level in its parameters. An encoder without one refuses it, by name, rather
        // than the generic number the codec context would silently take.
        for (setting, value) in [(Setting.profile, t.profile), (.level, t.level), (.tune, t.tune)] {
            guard let value else { continue }
            if setting == .profile, let number = try VideoEncoder.numberedProfile(value, encoder: name) {
                // libvpx-vp9, SVT-AV1 and libaom read the codec context's profile (ffmpeg's -profile:v).
                c.pointee.profile = Int32(number)
            } else if name == "libx265" && setting == .level {
                options["x265-params"] = (options["x265-params"].map { $0 + ":" } ?? "") + "level-idc=\(value)"
            } else if let priv = c.pointee.priv_data, av_opt_find(priv, setting.rawValue, nil, 0, 0) != nil {
                options[setting.rawValue] = value
            } else {
                throw CropZoomError(
                    .usage, setting: setting, reason: "\(setting: setting): the \(name) encoder has no such setting")
            }
        }
        if let gop = t.gop { c.pointee.gop_size = Int32(gop) }
        for (key, value) in t.options {
            // The encoder's parameter lists are merged with cropzoom's own, the user's keys winning key by key
            // (a whole replacement lost the level, the quiet log and HDR10's mastering display).
            if VideoEncoder.parameterLists.contains(key), let ours = options[key] {
                options[key] = VideoEncoder.mergeParameters(ours, value)
            } else {
                options[key] = value
            }
        }
        let unused: [String]
        do {
            unused = try context.open(options: options, kind: .processing, what: "opening the \(name) encoder")
        } catch  where error.code == AVCode.invalidArgument {
            // A value the encoder refuses (libvpx-vp9's tune is psnr or ssim): name what the user gave.
            let given =
                [(Setting.profile, t.profile), (.level, t.level), (.tune, t.tune)]
                .compactMap { pair in pair.1.map { "\(setting: pair.0) \($0)" } }
                + t.options.keys.sorted().map { "\(setting: .encoderOption) \($0)=\(t.options[$0]!)" }
            guard !given.isEmpty else { throw error }
            throw CropZoomError(
                .usage, path: s.path,
                reason: "the \(name) encoder refused \(given.joined(separator: ", ")) (\(error.reason); its values: "
                    + "`ffmpeg -h encoder=\(name)`)", code: error.code)
        }
        if let key = unused.sorted().first(where: { t.options[$0] != nil }) {
            throw CropZoomError(
                .usage, setting: .encoderOption,
                reason: "\(setting: .encoderOption) \(key): not an option of the \(name) encoder (see `ffmpeg -h "
                    + "encoder=\(name)`)")
        }
        let named: [Setting] = [.crf, .preset, .profile, .level, .tune]
        if let first = named.first(where: { unused.contains($0.rawValue) }) {
            throw CropZoomError(
                .usage, setting: first, reason: "\(setting: first): the \(name) encoder has no such setting")
        }
        timeBase = TimeBase(c.pointee.time_base)
        pixelFormat = s.pixelFormat
        fullRange = s.fullRange
        packet = try Packet()
    }

    /// The encoders' own `key=value:key=value` parameter lists (`--encoder-option x265-params=…`).
    static let parameterLists: Set<String> = ["x265-params", "x264-params", "svtav1-params", "aom-params"]

    /// `ours` and `theirs` (each `k=v:k=v`) as one list: every key of `ours` in its place, the value `theirs` gives
    /// it when it gives one, then the keys only `theirs` has, in its order.
    static func mergeParameters(_ ours: String, _ theirs: String) -> String {
        func pairs(_ s: String) -> [(String, String?)] {
            s.split(separator: ":", omittingEmptySubsequences: true).map { item in
                let kv = item.split(separator: "=", maxSplits: 1)
                return (String(kv[0]), kv.count > 1 ? String(kv[1]) : nil)
            }
        }
        let mine = pairs(ours)
        let given = pairs(theirs)
        var merged: [(String, String?)] = []
        for (k, v) in mine {
            merged.append(given.last(where: { $0.0 == k }).map { ($0.0, $0.1) } ?? (k, v))
        }
        for (k, v) in given where !mine.contains(where: { $0.0 == k }) {
            merged.removeAll { $0.0 == k }
            merged.append((k, v))
        }
        return merged.map { pair in pair.1.map { "\(pair.0)=\($0)" } ?? pair.0 }.joined(separator: ":")
    }

    /// The codec profile number `--profile` names for an encoder that takes it as a number on the codec context
    /// (libvpx-vp9: 0–3; SVT-AV1 and libaom: main, high, professional or 0–2); nil for other encoders. A value
    /// such an encoder has no profile for is a usage error listing what it takes.
    static func numberedProfile(_ value: String, encoder: String) throws(CropZoomError) -> Int? {
        let names: [String]
        switch encoder {
        case "libvpx-vp9": names = ["0", "1", "2", "3"]
        case "libsvtav1", "libaom-av1": names = ["main", "high", "professional"]
        default: return nil
        }
        let v = value.lowercased()
        if let n = names.firstIndex(of: v) { return n }
        if let n = Int(v), names.indices.contains(n) { return n }
        if v.hasPrefix("profile"), let n = Int(v.dropFirst(7)), names.indices.contains(n) { return n }
        throw CropZoomError(
            .usage, setting: .profile,
            reason: "\(setting: .profile) \(value): \(encoder) takes \(names.joined(separator: ", "))"
                + (names[0] == "main" ? " (or 0–2)" : ""))
    }

    /// Sends a frame (nil = flush) and hands every packet that comes out to `body` (valid
    /// during the call; `body` may take its payload).
    package func encode(_ frame: Frame?, _ body: (Packet) throws(CropZoomError) -> Void) throws(CropZoomError) {
        try context.encode(frame, into: packet, body)
    }
}
