import CFFmpeg
import CropZoomCore
import Foundation

/// What `cropzoom probe` reads of an opened input (``MediaInfo``): the container, its chapters and each stream as
/// FFmpeg reads them, plus what cropzoom derives — the displayed size and orientation, and whether the video frame
/// rate varies.
package enum MediaReading {
    /// Describes `input` (opened from `path`); `frameRate`: how many video packets to read to decide whether the
    /// frame rate varies (nil: not decided).
    package static func describe(_ input: InputFormat, path: String, frameRate: Int?) -> MediaInfo {
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
        if let rateWindow = frameRate, !videos.isEmpty {
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
    package static func isVariable(_ raw: [Int64]) -> (Bool, Int) {
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
