import CFFmpeg
import Foundation
import SystemPackage

/// What `cropzoom probe` reports about a file: the container and each stream, as FFmpeg reads
/// them (`avformat_open_input` + `avformat_find_stream_info`), plus what cropzoom derives —
/// the displayed size and orientation, and whether the video frame rate varies. Field names
/// are stable (the JSON uses them in snake_case; docs/probe-and-bench.md).
public struct MediaInfo: Codable, Sendable, Equatable {
    public var path: String
    /// Demuxer short name(s), as ffprobe's `format_name`.
    public var format: String
    public var formatLongName: String
    /// Seconds; nil when the container does not say.
    public var duration: Double?
    public var startTime: Double?
    /// Bits per second over the whole file, when known.
    public var bitRate: Int?
    public var sizeBytes: Int?
    /// The container's tags, as FFmpeg reads them (`title`, `creation_time`, `com.apple.quicktime.make` …); nil
    /// when it has none.
    public var tags: [String: String]?
    /// Chapters in order; nil when there are none.
    public var chapters: [ChapterInfo]?
    public var streams: [StreamInfo]

    /// True when the file has a video stream cropzoom can work on.
    public var hasVideo: Bool { streams.contains { $0.type == "video" && !$0.attachedPicture } }
}

/// One chapter: its times in seconds and its title.
public struct ChapterInfo: Codable, Sendable, Equatable {
    public var start: Double
    public var end: Double
    public var title: String?
}

/// HDR10 static metadata: the mastering display's primaries and white point (CIE 1931 x, y) and luminance
/// (cd/m²), as `AVMasteringDisplayMetadata` holds them.
public struct MasteringDisplay: Codable, Sendable, Equatable {
    public var red: [Double]?
    public var green: [Double]?
    public var blue: [Double]?
    public var whitePoint: [Double]?
    public var minLuminance: Double?
    public var maxLuminance: Double?
}

/// HDR10 content light level (cd/m²): MaxCLL and MaxFALL.
public struct ContentLightLevel: Codable, Sendable, Equatable {
    public var maxContent: Int
    public var maxAverage: Int
}

/// A Dolby Vision configuration record (`AVDOVIDecoderConfigurationRecord`).
public struct DolbyVision: Codable, Sendable, Equatable {
    public var profile: Int
    public var level: Int
    /// The base layer's compatibility: 0 none, 1 HDR10, 2 SDR, 4 HLG …
    public var compatibilityID: Int
}

public struct StreamInfo: Codable, Sendable, Equatable {
    public var index: Int
    /// "video", "audio", "subtitle", "data", "attachment" or "unknown".
    public var type: String
    /// Codec short name ("h264", "aac", …; "unknown" when libavcodec has none).
    public var codec: String
    public var profile: String?
    public var startTime: Double?
    public var duration: Double?
    /// Frames or packets the container declares (0 when it does not).
    public var declaredFrames: Int
    public var language: String?
    public var isDefault: Bool
    /// A cover picture stored as a video stream (not video).
    public var attachedPicture: Bool

    // Video.
    /// Stored (coded) picture size.
    public var width: Int?
    public var height: Int?
    /// Size as a player shows it: rotated by the display matrix, stretched by the sample
    /// aspect ratio to square pixels.
    public var displayWidth: Int?
    public var displayHeight: Int?
    /// Clockwise rotation a player applies (0, 90, 180, 270), and whether it then mirrors the
    /// picture left-right.
    public var rotation: Int?
    public var mirrored: Bool?
    /// "num:den" ("1:1" when the stream declares none).
    public var sampleAspectRatio: String?
    public var pixelFormat: String?
    public var bitDepth: Int?
    /// "num/den", as ffprobe's r_frame_rate and avg_frame_rate.
    public var rFrameRate: String?
    public var avgFrameRate: String?
    /// avg_frame_rate as a number (frames per second), when known.
    public var fps: Double?
    /// True when the presentation times of the first frames are not evenly spaced.
    public var variableFrameRate: Bool?
    /// How many frames that was decided on (the first `MediaProbe.rateWindow` or all).
    public var frameRateCheckedFrames: Int?
    /// ffprobe's `field_order`: "progressive", or interlaced "tt", "bb", "tb", "bt"; nil when
    /// the stream does not say.
    public var fieldOrder: String?
    /// ffprobe's colour names (`tv`/`pc`, `bt709`, `bt2020nc`, `smpte2084`, `arib-std-b67`, `left` …); nil when
    /// the stream does not say.
    public var colorRange: String?
    public var colorSpace: String?
    public var colorPrimaries: String?
    public var colorTransfer: String?
    public var chromaLocation: String?
    /// "PQ" or "HLG" for HDR video (by its transfer); nil otherwise.
    public var hdr: String?
    /// HDR10 metadata from the stream's side data or, for PQ video without it, its first frame (as a transcode
    /// reads it).
    public var masteringDisplay: MasteringDisplay?
    public var contentLightLevel: ContentLightLevel?
    public var dolbyVision: DolbyVision?

    // Audio.
    public var sampleRate: Int?
    public var channels: Int?
    public var channelLayout: String?
    public var sampleFormat: String?

    /// The stream's tags (`language`, `handler_name`, `title` …); nil when it has none.
    public var tags: [String: String]?
}

public enum MediaProbe {
    /// Video packets read to decide whether the frame rate varies (≈ 30 s at 30 fps).
    public static let rateWindow = 900

    /// Opens `path` and describes it. Fails like a transcode would (`.inputUnreadable`, one line).
    /// `frameRate: false` skips reading the first `rateWindow` video packets (the variable frame
    /// rate check) when only the streams are wanted, as `batch` wants them.
    /// ``probe(_:frameRate:)-(String,_)`` for a `FilePath` (its bytes kept) or a URL (a file URL's path, any other
    /// as written).
    public static func probe(_ path: FilePath, frameRate: Bool = true) throws(CropZoomError) -> MediaInfo {
        try probe(RawPath.string(path), frameRate: frameRate)
    }
    public static func probe(_ url: URL, frameRate: Bool = true) throws(CropZoomError) -> MediaInfo {
        try probe(RawPath.string(url), frameRate: frameRate)
    }

    /// Why `path` does not read as a whole media file yet, or nil when it does: it opens, its streams are found,
    /// and its index (MP4/MOV) places no sample past the file's end. What `batch watch` asks before it takes a
    /// file that is still being copied in pieces.
    public static func incompleteness(_ path: String) -> String? {
        cz_log_install(AV_LOG_QUIET)
        do {
            let input = try InputFormat(path: path)
            return input.indexPointsPastEnd() ? "its index points past its end (still being written?)" : nil
        } catch {
            return error.reason
        }
    }

    public static func probe(_ path: String, frameRate: Bool = true) throws(CropZoomError) -> MediaInfo {
        cz_log_install(AV_LOG_QUIET)  // FFmpeg's own messages would break the one-line errors
        try InputSetup.check(path)
        let input = try InputFormat(path: path)
        let ctx = input.pointer
        var size: Int? = nil
        if let pb = ctx.pointee.pb {
            let s = avio_size(pb)
            if s >= 0 { size = Int(s) }
        }
        let start = ctx.pointee.start_time
        var info = MediaInfo(
            path: path, format: input.formatName,
            formatLongName: ctx.pointee.iformat.pointee.long_name.map { String(cString: $0) } ?? "",
            duration: input.duration,
            startTime: start != AVCode.noPTS ? Double(start) / Double(AV_TIME_BASE) : nil,
            bitRate: ctx.pointee.bit_rate > 0 ? Int(ctx.pointee.bit_rate) : nil,
            sizeBytes: size, streams: [])
        info.tags = tags(ctx.pointee.metadata)
        var chapters: [ChapterInfo] = []
        for i in 0..<input.chapterCount {
            guard let c = ctx.pointee.chapters[i] else { continue }
            let tb = TimeBase(c.pointee.time_base)
            chapters.append(
                ChapterInfo(
                    start: Double(c.pointee.start) * tb.seconds, end: Double(c.pointee.end) * tb.seconds,
                    title: tags(c.pointee.metadata)?["title"]))
        }
        info.chapters = chapters.isEmpty ? nil : chapters
        for i in 0..<input.streamCount {
            info.streams.append(describe(input.stream(i), index: i, path: path == "-" ? nil : path))
        }
        // Variable frame rate: the spacing of the first video frames' presentation times.
        let videos = info.streams.filter { $0.type == "video" && !$0.attachedPicture }.map(\.index)
        if frameRate && !videos.isEmpty {
            let times = presentationTimes(input, streams: Set(videos), limit: rateWindow)
            for i in videos {
                let (variable, n) = isVariable(times[i] ?? [])
                info.streams[i].variableFrameRate = variable
                info.streams[i].frameRateCheckedFrames = n
            }
        }
        return info
    }

    private static func seconds(_ t: Int64, _ tb: TimeBase) -> Double? {
        t == AVCode.noPTS ? nil : Double(t) * tb.seconds
    }

    private static func rational(_ r: Rational) -> String { "\(r.num)/\(r.den)" }

    /// A metadata dictionary's entries (`av_dict_get`); nil when empty.
    private static func tags(_ dict: OpaquePointer?) -> [String: String]? {
        var tags: [String: String] = [:]
        var entry: UnsafeMutablePointer<AVDictionaryEntry>? = nil
        while let e = av_dict_get(dict, "", entry, AV_DICT_IGNORE_SUFFIX) {
            tags[String(cString: e.pointee.key)] = String(cString: e.pointee.value)
            entry = e
        }
        return tags.isEmpty ? nil : tags
    }

    /// The colour of a video stream as ffprobe names it (`av_color_range_name` …), unspecified values left out;
    /// its HDR metadata as a transcode reads it (`HDRMetadata.read`); its Dolby Vision record (stream side data
    /// `AV_PKT_DATA_DOVI_CONF`).
    private static func describeColor(_ st: StreamRef, index: Int, path: String?, into s: inout StreamInfo) {
        let par = st.parameters.pointee
        func name(_ p: UnsafePointer<CChar>?) -> String? { p.map { String(cString: $0) } }
        if par.color_range != AVCOL_RANGE_UNSPECIFIED { s.colorRange = name(av_color_range_name(par.color_range)) }
        if par.color_space != AVCOL_SPC_UNSPECIFIED { s.colorSpace = name(av_color_space_name(par.color_space)) }
        if par.color_primaries != AVCOL_PRI_UNSPECIFIED {
            s.colorPrimaries = name(av_color_primaries_name(par.color_primaries))
        }
        if par.color_trc != AVCOL_TRC_UNSPECIFIED { s.colorTransfer = name(av_color_transfer_name(par.color_trc)) }
        if par.chroma_location != AVCHROMA_LOC_UNSPECIFIED {
            s.chromaLocation = name(av_chroma_location_name(par.chroma_location))
        }
        s.hdr = st.hdrTransfer
        if let h = HDRMetadata.read(st, index: index, path: s.hdr == "PQ" ? path : nil) {
            if let m = h.mastering {
                func v(_ q: AVRational) -> Double { q.den == 0 ? 0 : av_q2d(q) }
                let p = m.display_primaries
                var d = MasteringDisplay()
                if m.has_primaries != 0 {
                    d.red = [v(p.0.0), v(p.0.1)]
                    d.green = [v(p.1.0), v(p.1.1)]
                    d.blue = [v(p.2.0), v(p.2.1)]
                    d.whitePoint = [v(m.white_point.0), v(m.white_point.1)]
                }
                if m.has_luminance != 0 {
                    d.minLuminance = v(m.min_luminance)
                    d.maxLuminance = v(m.max_luminance)
                }
                s.masteringDisplay = d
            }
            if let l = h.light {
                s.contentLightLevel = ContentLightLevel(maxContent: Int(l.MaxCLL), maxAverage: Int(l.MaxFALL))
            }
        }
        if let dv = st.dolbyVision {
            s.dolbyVision = DolbyVision(profile: dv.profile, level: dv.level, compatibilityID: dv.compatibility)
        }
    }

    private static func describe(_ st: StreamRef, index: Int, path: String?) -> StreamInfo {
        let par = st.parameters.pointee
        let type: String
        switch par.codec_type {
        case AVMEDIA_TYPE_VIDEO: type = "video"
        case AVMEDIA_TYPE_AUDIO: type = "audio"
        case AVMEDIA_TYPE_SUBTITLE: type = "subtitle"
        case AVMEDIA_TYPE_DATA: type = "data"
        case AVMEDIA_TYPE_ATTACHMENT: type = "attachment"
        default: type = "unknown"
        }
        // As ffprobe names it: the codec descriptor's name, "unknown" without one.
        let codecName = avcodec_descriptor_get(par.codec_id).map { String(cString: $0.pointee.name) } ?? "unknown"
        var profile: String? = nil
        if par.profile != FF_PROFILE_UNKNOWN, let p = avcodec_profile_name(par.codec_id, par.profile) {
            profile = String(cString: p)
        }
        let language = st.metadata("language")
        let streamTags = tags(st.pointer.pointee.metadata)
        let disposition = st.disposition
        var s = StreamInfo(
            index: index, type: type, codec: codecName, profile: profile,
            startTime: seconds(st.startTime ?? AVCode.noPTS, st.timeBase),
            duration: st.duration > 0 ? seconds(st.duration, st.timeBase) : nil,
            declaredFrames: Int(st.declaredFrames), language: language,
            isDefault: disposition & AV_DISPOSITION_DEFAULT != 0,
            attachedPicture: disposition & AV_DISPOSITION_ATTACHED_PIC != 0)
        s.tags = streamTags
        if par.codec_type == AVMEDIA_TYPE_VIDEO {
            s.width = Int(par.width)
            s.height = Int(par.height)
            let orientation = st.displayOrientation
            // Rotation first, then a left-right mirror when mirrored (FFmpeg's reading of a
            // display matrix: ffprobe's `rotation`, then hflip).
            s.rotation = (orientation.isMirror ? orientation.then(.flipHorizontal) : orientation).rotationDegrees
            s.mirrored = orientation.isMirror
            var sar = st.sampleAspectRatio
            if !sar.isKnown { sar = Rational(par.sample_aspect_ratio) }
            if !sar.isKnown { sar = .one }
            s.sampleAspectRatio = "\(sar.num):\(sar.den)"
            let stretched = (Double(par.width) * sar.value).rounded()
            let shown = orientation.apply(width: Int(stretched), height: Int(par.height))
            (s.displayWidth, s.displayHeight) = (shown.width, shown.height)
            let pf = AVPixelFormat(rawValue: par.format)
            if let info = PixelFormatInfo(pf) {
                s.pixelFormat = info.name
                s.bitDepth = info.bitDepth
            }
            s.fieldOrder = st.fieldOrder?.name
            describeColor(st, index: index, path: path, into: &s)
            s.rFrameRate = rational(st.realFrameRate)
            s.avgFrameRate = rational(st.averageFrameRate)
            if st.averageFrameRate.isKnown { s.fps = st.averageFrameRate.value }
        } else if par.codec_type == AVMEDIA_TYPE_AUDIO {
            s.sampleRate = Int(par.sample_rate)
            s.channels = Int(par.ch_layout.nb_channels)
            var layout = par.ch_layout
            var buffer = [CChar](repeating: 0, count: 128)
            if av_channel_layout_describe(&layout, &buffer, buffer.count) > 0 {
                s.channelLayout = String(
                    decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            }
            if let name = av_get_sample_fmt_name(AVSampleFormat(rawValue: par.format)) {
                s.sampleFormat = String(cString: name)
            }
        }
        return s
    }

    /// Presentation times (in stream ticks) of the first `limit` packets of `streams`.
    private static func presentationTimes(_ input: InputFormat, streams: Set<Int>, limit: Int) -> [Int: [Int64]] {
        var times: [Int: [Int64]] = [:]
        guard let packet = try? Packet() else { return times }
        var read = 0
        var failures = 0
        while read < limit * max(1, streams.count) && failures < 16 {
            let step: AVStep<Void>
            do { step = try input.read(into: packet) } catch {
                failures += 1
                continue
            }
            guard case .value = step else {
                if case .again = step { continue }
                break
            }
            defer { packet.unref() }
            let i = packet.streamIndex
            guard streams.contains(i), (times[i]?.count ?? 0) < limit else { continue }
            let t = packet.pts != AVCode.noPTS ? packet.pts : packet.dts
            if t != AVCode.noPTS { times[i, default: []].append(t) }
            read += 1
        }
        return times
    }

    /// Whether sorted presentation times are unevenly spaced (frame durations differ by more
    /// than 1 % and one tick), and how many frames that looked at. The last few times of a
    /// window cut from decode order may have gaps (reordered frames not read yet): left out.
    static func isVariable(_ raw: [Int64]) -> (Bool, Int) {
        var t = raw.sorted()
        if t.count >= 40 { t.removeLast(8) }
        guard t.count >= 3 else { return (false, t.count) }
        var lo = Int64.max
        var hi = Int64.min
        for k in 1..<t.count {
            // Damaged times can be as far apart as Int64 allows: such a gap is uneven spacing too.
            let (d, overflow) = t[k].subtractingReportingOverflow(t[k - 1])
            if overflow { return (true, t.count) }
            guard d > 0 else { continue }
            lo = min(lo, d)
            hi = max(hi, d)
        }
        guard lo != Int64.max else { return (false, t.count) }
        let variable = hi - lo > 1 && Double(hi - lo) > 0.01 * Double(lo)
        return (variable, t.count)
    }
}
