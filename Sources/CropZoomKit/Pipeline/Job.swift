import CCropZoomSystem
import CFFmpeg
import Foundation

/// Everything one transcode needs, opened and configured: the input and its routes, the video
/// decoder, the geometry, the encoder (unless `--codec none`), the muxer with its header
/// written. The engines (serial or threaded) drive it; `finish` completes the file.
///
/// `@unchecked Sendable`: set up on one thread, then each stage object is used by exactly one
/// engine thread (see `ThreadedEngine`); the rest is read-only.
final class Job: @unchecked Sendable {
    /// What happens to each input stream.
    enum Route {
        case video(output: Int)
        case copy(output: Int)
        case reencode(AudioTranscoder, output: Int)
        case drop
    }

    let configuration: TranscodeConfiguration
    let atomic: AtomicOutput?
    let demuxer: Demuxer
    let decoder: VideoDecoder
    let encoder: VideoEncoder?
    let muxer: Muxer
    let plan: GeometryPlan
    let outputFormat: AVPixelFormat
    let fullRange: Bool
    /// The YUV matrix of an RGB ↔ YUV conversion: the output's label, or the input's for RGB output.
    let matrix: AVColorSpace
    let routes: [Route]
    let videoIndex: Int
    let videoOutput: Int?
    let rescaleToEncoder: Bool
    /// Seconds of the first video frame and of the whole input, for progress.
    let startTime: Double
    let duration: Double?
    let notices: [String]
    let audioCopied: Int, audioReencoded: Int, otherCopied: Int, dropped: Int
    /// How the job's threads are shared out (decided once the geometry and the encoder are known).
    let threads: ThreadPlan
    /// `--start`/`--end` in each input stream's time base (absolute), nil without a trim.
    let trim: Trim?
    /// `--start`/`--end` in seconds from the file's start, nil without a trim.
    let trimRange: (start: Double, end: Double?)?
    /// Where the video stream starts and ends, in seconds from the file's start (when known).
    let videoSpan: (start: Double?, end: Double?)

    /// Where each input stream's kept times lie and how they are moved: the trim window, and the
    /// shift that makes the output start at 0 (a trim's start, or an MPEG clock's origin).
    struct Trim {
        /// Per input stream: the first kept time and the first time no longer kept.
        var start: [Int64]
        var end: [Int64?]
        /// Per input stream: subtracted from every kept time.
        var shift: [Int64]
        /// Per input stream: a subtitle stream, whose packets are shown for their duration — one
        /// that overlaps the window is kept, cut to it.
        var subtitle: [Bool]

        func keeps(_ p: Packet) -> Bool {
            let t = p.pts != AVCode.noPTS ? p.pts : p.dts
            guard t != AVCode.noPTS else { return true }
            let i = p.streamIndex
            let d = p.pointer.pointee.duration
            if subtitle[i] && d > 0 { return t + d > start[i] && (end[i].map { t < $0 } ?? true) }
            return t >= start[i] && (end[i].map { t < $0 } ?? true)
        }

        /// A kept subtitle packet shown beyond the window starts or ends at its edge.
        func cut(_ p: Packet) {
            let i = p.streamIndex
            let d = p.pointer.pointee.duration
            guard subtitle[i], d > 0, p.pts != AVCode.noPTS else { return }
            let from = max(p.pts, start[i])
            let to = min(p.pts + d, end[i] ?? .max)
            p.pointer.pointee.pts = from
            if p.dts != AVCode.noPTS { p.pointer.pointee.dts = max(p.dts, from) }
            p.pointer.pointee.duration = to - from
        }

        /// True for a packet at or after the end (its stream has nothing more to give).
        func isPastEnd(_ p: Packet) -> Bool {
            let t = p.pts != AVCode.noPTS ? p.pts : p.dts
            guard t != AVCode.noPTS, let e = end[p.streamIndex] else { return false }
            return t >= e
        }

        func shift(_ p: Packet) {
            let o = shift[p.streamIndex]
            if p.pts != AVCode.noPTS { p.pointer.pointee.pts -= o }
            if p.dts != AVCode.noPTS { p.pointer.pointee.dts -= o }
        }

        /// A copied or re-encoded packet: false when it lies outside the trim (drop it); a kept
        /// one is shifted by the start. A packet at or past the end takes its stream off
        /// `waitingFor` (the streams the reader still waits on before it may stop).
        func admit(_ p: Packet, waitingFor: inout Set<Int>) -> Bool {
            if isPastEnd(p) { waitingFor.remove(p.streamIndex) }
            guard keeps(p) else { return false }
            cut(p)
            shift(p)
            return true
        }
    }

    enum FrameVerdict { case before, keep, after }

    /// Input streams whose packets are copied or re-encoded (the ones a trim's end must wait for).
    var passThroughStreams: Set<Int> {
        Set(
            routes.indices.filter { i in
                switch routes[i] {
                case .copy, .reencode: return true
                default: return false
                }
            })
    }

    /// Where a decoded video frame lies against the trim; a kept frame's timestamps are
    /// shifted by the start.
    @inline(__always)
    func place(_ frame: Frame) -> FrameVerdict {
        guard let trim else { return .keep }
        let t = frame.presentationTime
        guard t != AVCode.noPTS else { return .keep }
        if t < trim.start[videoIndex] { return .before }
        if let e = trim.end[videoIndex], t >= e { return .after }
        let o = trim.shift[videoIndex]
        if frame.pointer.pointee.pts != AVCode.noPTS { frame.pointer.pointee.pts -= o }
        if frame.pointer.pointee.best_effort_timestamp != AVCode.noPTS {
            frame.pointer.pointee.best_effort_timestamp -= o
        }
        return .keep
    }

    /// Raised by `Pipeline.cancel`; the engines poll it.
    let cancel: CancelFlag

    init(_ cfg: TranscodeConfiguration, cancel: CancelFlag = CancelFlag(), notice onNotice: (String) -> Void)
        throws(CropZoomError)
    {
        configuration = cfg
        self.cancel = cancel
        if cfg.input != "-" { try Pipeline.checkInput(cfg.input) }
        // Standard output ("-") is written as it comes: a pipe has no temporary name to rename.
        var earlyNotices: [String] = []
        if cfg.null || cfg.output == "-" {
            atomic = nil
        } else {
            let muxerName = av_guess_format(cfg.format, cfg.output, nil).map { String(cString: $0.pointee.name) }
            // One image file cannot hold every frame (image2 fails at the second one).
            if muxerName == "image2", RawPath.withCString(cfg.output, { av_filename_number_test($0) }) == 0 {
                let name = URL(fileURLWithPath: cfg.output).deletingPathExtension().lastPathComponent
                let ext = URL(fileURLWithPath: cfg.output).pathExtension
                throw CropZoomError(
                    .usage, path: cfg.output,
                    reason: "names one image, but every frame is written: use a pattern such as "
                        + "\(name)_%04d.\(ext) (one image per frame)")
            }
            atomic = try AtomicOutput(
                target: cfg.output, input: cfg.input, overwrite: cfg.overwrite, force: cfg.force,
                multiFile: muxerName.map(AtomicOutput.multiFileMuxers.contains) ?? false,
                notice: {
                    earlyNotices.append($0)
                    onNotice($0)
                })
        }

        // Demux and pick the video stream.
        demuxer = try Demuxer(path: cfg.input)
        let input = demuxer.input
        guard let videoIndex = input.bestVideoStream() else {
            let cover = (0..<input.streamCount).contains(where: input.isAttachedPicture)
            throw CropZoomError(
                .inputUnreadable, path: cfg.input == "-" ? "stdin" : cfg.input,
                reason: cover ? "no video stream (only a cover picture)" : "no video stream")
        }
        self.videoIndex = videoIndex
        let videoStream = input.stream(videoIndex)
        decoder = try VideoDecoder(input: input, streamIndex: videoIndex)
        let dec = decoder.context.pointer
        guard dec.pointee.width > 0, dec.pointee.height > 0, dec.pointee.pix_fmt != AV_PIX_FMT_NONE else {
            if cfg.input == "-" && input.formatName.contains("mp4") {
                throw CropZoomError(
                    .inputUnreadable, path: "stdin",
                    reason:
                        "an MP4/MOV read from a pipe needs its index (moov) at the front; this one has it at the "
                        + "end (remux with -movflags +faststart, or name the file)"
                )
            }
            throw CropZoomError(
                .inputUnreadable, path: cfg.input == "-" ? "stdin" : cfg.input,
                reason: "the video stream has no decodable pictures")
        }

        // Output container and video encoder.
        let output = try OutputFormat(
            path: cfg.output == "-" && !cfg.null ? "pipe:1" : atomic?.writePath ?? "",
            displayPath: cfg.output == "-" ? "stdout" : cfg.output,
            formatName: cfg.null ? "null" : cfg.format,
            streaming: cfg.output == "-" || atomic?.kind == .stream)
        let containerName =
            cfg.null
            ? (cfg.format ?? av_guess_format(nil, cfg.output, nil).map { String(cString: $0.pointee.name) }
                ?? "matroska")
            : output.formatName
        muxer = Muxer(output: output)
        // With --null the packets go to FFmpeg's null muxer, but codec and stream decisions are
        // the ones the named container would get (so --null measures, and a plan shows, the
        // real job).
        let container =
            cfg.null ? (try? OutputFormat(path: "", displayPath: cfg.output, formatName: cfg.format)) ?? output : output
        let codec: UnsafePointer<AVCodec>? =
            cfg.skipEncoder ? nil : try VideoEncoder.findCodec(named: cfg.codec, output: container)
        let inFormat = dec.pointee.pix_fmt
        outputFormat =
            try codec.map { (c: UnsafePointer<AVCodec>) throws(CropZoomError) in
                try VideoEncoder.choosePixelFormat(codec: c, input: inFormat, requested: cfg.pixelFormat)
            } ?? inFormat
        let inInfo = PixelFormatInfo(inFormat)!
        let outInfo = PixelFormatInfo(outputFormat)!
        fullRange = outInfo.isJ || inInfo.isJ || dec.pointee.color_range == AVCOL_RANGE_JPEG
        let inSpace = videoStream.pointee.codecpar.pointee.color_space
        matrix =
            outInfo.isRGB
            ? inSpace : VideoEncoder.matrix(inputSpace: inSpace, inputFormat: inFormat, output: outputFormat)

        // Geometry.
        let source = SourcePicture(
            width: Int(dec.pointee.width), height: Int(dec.pointee.height),
            sampleAspect: Pipeline.sampleAspect(videoStream, dec),
            display: Pipeline.displayOrientation(videoStream),
            alignX: 1 << inInfo.log2ChromaW, alignY: 1 << inInfo.log2ChromaH)
        var geometry = try GeometryPlan.make(cfg.geometry, source: source, outputAlign: outInfo.alignment)
        if case .cover = cfg.background {
            guard geometry.warp != nil else {
                throw CropZoomError(
                    .usage,
                    reason:
                        "--background cover zooms a rotated or moved picture in until it fills the frame: it needs "
                        + "--rotate by an angle other than 0/90/180/270, or --transform (use another --background)"
                )
            }
            geometry.warp?.cover = true
        }
        plan = geometry

        if plan.animation != nil && cfg.kernel == .swscale {
            throw CropZoomError(
                .usage,
                reason:
                    "keyframed --zoom/--center and --zoom below 1 need sub-pixel windows, which swscale cannot "
                    + "read: use --kernel auto"
            )
        }
        // `--kernel zimg` where zimg cannot scale: refused before anything is written.
        if cfg.kernel == .zimg,
            let reason = ZimgScaler.refusal(
                src: inFormat, dst: outputFormat, srcFullRange: fullRange,
                dstFullRange: fullRange, filter: cfg.scaler)
        {
            throw ZimgScaler.refused(reason, src: inFormat, dst: outputFormat)
        }

        // Threads, now that the work of each stage is known; then open the decoder with its share.
        let load = ThreadPlan.Load(
            inputPixels: source.width * source.height,
            outputPixels: plan.output.width * plan.output.height,
            encoder: codec.map { String(cString: $0.pointee.name) }, preset: cfg.preset,
            strict: cfg.strict, heavyTransform: plan.warp != nil)
        threads = ThreadPlan.make(
            threads: cfg.threads, load: load, decoder: cfg.decoderThreads,
            encoder: cfg.encoderThreads, workers: cfg.workers)
        try decoder.open(threads: threads.decoder)

        var encoder: VideoEncoder? = nil
        let hdr = HDRMetadata.read(videoStream, index: videoIndex, path: cfg.input == "-" ? nil : cfg.input)
        if let codec {
            let sar = plan.keepsInputAspectAndMatrix ? dec.pointee.sample_aspect_ratio : AVRational(num: 1, den: 1)
            var frameRate = videoStream.pointee.avg_frame_rate
            if frameRate.num <= 0 || frameRate.den <= 0 { frameRate = videoStream.pointee.r_frame_rate }
            do {
                encoder = try VideoEncoder(
                    .init(
                        codec: codec, width: plan.output.width, height: plan.output.height,
                        pixelFormat: outputFormat, fullRange: fullRange, timeBase: videoStream.pointee.time_base,
                        frameRate: frameRate, sampleAspect: sar,
                        colorSource: UnsafePointer(videoStream.pointee.codecpar),
                        globalHeader: output.needsGlobalHeader, threads: threads.encoder,
                        crf: cfg.crf, preset: cfg.preset, bitrate: cfg.bitrate, path: cfg.output, hdr: hdr,
                        verbose: cfg.verbose))
            } catch  where cfg.codec == nil && error.kind == .processing && error.code == AVCode.invalidArgument {
                // The container's own codec (DV's, for one, takes 720x480 at 29.97 fps or 720x576
                // at 25 fps only) refuses this picture: a usage error, before anything is written.
                let name = String(cString: codec.pointee.name)
                let fps = frameRate.den > 0 ? String(format: "%.4g", av_q2d(frameRate)) : "?"
                throw CropZoomError(
                    .usage, path: cfg.output,
                    reason: "\(containerName)'s own codec \(name) cannot encode "
                        + "\(plan.output.width)x\(plan.output.height) at \(fps) fps "
                        + "(use a size and rate it takes, --codec, or another container)")
            }
        }
        self.encoder = encoder
        let decoderTimeBase = decoder.timeBase
        rescaleToEncoder = encoder.map { av_cmp_q(decoderTimeBase, $0.timeBase) != 0 } ?? false

        // Route every input stream.
        var routes = [Route](repeating: .drop, count: input.streamCount)
        var notices: [String] = earlyNotices
        func notice(_ s: String) {
            notices.append(s)
            onNotice(s)
        }
        var audioCopied = 0
        var audioReencoded = 0
        var otherCopied = 0
        var dropped = 0
        // Streams dropped for the same reason get one note between them (`Job.dropNote`).
        var drops: [DropGroup] = []
        func drop(_ kind: String, _ i: Int, _ codec: String, _ reason: String) {
            dropped += 1
            if let g = drops.firstIndex(where: { $0.kind == kind && $0.reason == reason }) {
                drops[g].streams.append((i, codec))
            } else {
                drops.append(DropGroup(kind: kind, reason: reason, streams: [(i, codec)]))
            }
        }
        var videoOutput: Int? = nil
        let sameFamily = input.formatName.split(separator: ",").contains {
            $0 == containerName || ($0 == "mov" && containerName == "mp4") || ($0 == "mp4" && containerName == "mov")
        }
        for i in 0..<input.streamCount {
            let st = input.stream(i)
            let par = st.pointee.codecpar!
            let codecName = String(cString: avcodec_get_name(par.pointee.codec_id))
            if i == videoIndex {
                if let encoder {
                    let out = try muxer.addEncodedStream(from: encoder.context.pointer, input: st)
                    hdr?.attach(to: muxer.output.stream(out))
                    if plan.keepsInputAspectAndMatrix {
                        if !muxer.copyDisplayMatrix(from: st, to: out, container: containerName) {
                            let turn = Pipeline.displayOrientation(st)
                            notice(
                                "video stream #\(i): \(containerName) cannot store its display matrix "
                                    + "(\(turn)); the output shows the coded picture unturned")
                        }
                    } else {
                        muxer.dropHTCRotation(out)
                    }
                    // VP9 keeps alpha beside the picture (ALPHA_MODE 1), which FFmpeg's decoder skips.
                    let alphaMode = av_dict_get(st.pointee.metadata, "alpha_mode", nil, 0)
                        .map { String(cString: $0.pointee.value) }
                    if inInfo.hasAlpha && !outInfo.hasAlpha {
                        let what = "\(encoder.context.name) \(outInfo.name)"
                        notice("video stream #\(i): its alpha channel is dropped (\(what) has none)")
                    } else if alphaMode == "1" && !inInfo.hasAlpha {
                        notice("video stream #\(i): its alpha channel (VP9 ALPHA_MODE) is dropped: it is not decoded")
                    }
                    if let f = MediaProbe.fieldOrder(par.pointee.field_order), f.name != "progressive" {
                        if cfg.deinterlace == .off {
                            notice(
                                "video stream #\(i) is interlaced (\(f.meaning)); --deinterlace off: its fields "
                                    + "are scaled woven together")
                        } else {
                            notice(
                                "video stream #\(i) is interlaced (\(f.meaning)); its interlaced frames are "
                                    + "deinterlaced (the first field kept, the second rebuilt from it)")
                        }
                    }
                    videoOutput = out
                    routes[i] = .video(output: out)
                } else {
                    routes[i] = .video(output: -1)
                }
                continue
            }
            // A QuickTime chapter track is kept as the chapters (copied below), not as a stream.
            if Job.isChapterTrack(st, in: input) { continue }
            switch par.pointee.codec_type {
            case AVMEDIA_TYPE_AUDIO:
                if cfg.audio == .none {
                    dropped += 1
                    continue
                }
                // (An MPEG-TS can declare a stream whose first packets come after the probe.)
                if par.pointee.sample_rate <= 0 || par.pointee.ch_layout.nb_channels <= 0 {
                    drop(
                        "audio", i, codecName,
                        "its sample rate and channels are unknown "
                            + "(no packet of it in the part of the file FFmpeg probes)")
                    continue
                }
                let canCopy = container.canStore(par.pointee.codec_id)
                if cfg.audio == .aac && !container.canStore(AV_CODEC_ID_AAC) {
                    throw CropZoomError(
                        .usage, path: cfg.output,
                        reason: "--audio aac: \(containerName) cannot hold AAC")
                }
                if cfg.audio == .aac || (cfg.audio == .auto && !canCopy) {
                    guard let target = cfg.audio == .aac ? "aac" : AudioTranscoder.encoderName(for: container) else {
                        drop("audio", i, codecName, "\(containerName) holds no audio")
                        continue
                    }
                    // FFmpeg 5.1's MXF muxer takes 48 kHz audio only ("only 48khz is implemented").
                    let rate: Int32? = containerName.hasPrefix("mxf") ? 48000 : nil
                    let t = try AudioTranscoder(
                        input: input, streamIndex: i, encoderName: target,
                        globalHeader: output.needsGlobalHeader, sampleRate: rate)
                    let out = try muxer.addEncodedStream(from: t.encoder.pointer, input: st)
                    routes[i] = .reencode(t, output: out)
                    audioReencoded += 1
                    if cfg.audio == .auto {
                        let id = t.encoder.pointer.pointee.codec_id
                        let targetName =
                            id == AV_CODEC_ID_OPUS
                            ? "Opus" : String(cString: avcodec_get_name(id)).uppercased()
                        notice(
                            "audio stream #\(i) (\(codecName)) cannot go in \(containerName); "
                                + "re-encoding it to \(targetName)")
                    }
                } else if canCopy {
                    let mkvIn = input.formatName.hasPrefix("matroska")
                    let mkvOut = containerName == "matroska" || containerName == "webm"
                    routes[i] = .copy(
                        output: try muxer.addCopiedStream(
                            from: st, sameContainerFamily: sameFamily,
                            matroskaCodecDelay: mkvIn && mkvOut && par.pointee.codec_id == AV_CODEC_ID_OPUS))
                    audioCopied += 1
                } else {
                    throw CropZoomError(
                        .usage, path: cfg.output,
                        reason:
                            "audio stream #\(i) (\(codecName)) cannot be copied into \(containerName) (--audio "
                            + "copy); use --audio auto or aac"
                    )
                }
            case AVMEDIA_TYPE_SUBTITLE, AVMEDIA_TYPE_DATA:
                let kind = par.pointee.codec_type == AVMEDIA_TYPE_SUBTITLE ? "subtitle" : "data"
                if par.pointee.codec_id != AV_CODEC_ID_NONE && container.canStore(par.pointee.codec_id) {
                    routes[i] = .copy(output: try muxer.addCopiedStream(from: st, sameContainerFamily: sameFamily))
                    otherCopied += 1
                } else {
                    drop(kind, i, codecName, "\(containerName) cannot hold it")
                }
            case AVMEDIA_TYPE_VIDEO:
                dropped += 1
                let what = st.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC != 0 ? "cover picture" : "video stream"
                notice("\(what) #\(i) (\(codecName)) dropped: cropzoom transforms one video stream (#\(videoIndex))")
            default:
                drop("", i, codecName, "\(containerName) cannot hold it")
            }
        }
        for g in drops { notice(g.note) }
        self.routes = routes
        self.videoOutput = videoOutput
        self.notices = notices
        self.audioCopied = audioCopied
        self.audioReencoded = audioReencoded
        self.otherCopied = otherCopied
        self.dropped = dropped
        av_dict_copy(&output.pointer.pointee.metadata, input.pointer.pointee.metadata, 0)
        // Trim: every stream's window, then a seek to a key frame before it (a second early, so
        // frames a B-frame delay before a key frame's decode time are not skipped).
        let subtitles = (0..<input.streamCount).map {
            input.stream($0).pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_SUBTITLE
        }
        if cfg.start != nil || cfg.end != nil {
            let fileStart = input.startSeconds
            let s = fileStart + (cfg.start ?? 0)
            let e = cfg.end.map { fileStart + $0 }
            let end = input.span().end.map { $0 - fileStart }
            if let d = end, (cfg.start ?? 0) >= d {
                let digits: Int32 = (cfg.start ?? 0) < 1e9 ? 13 : 4
                var reason = String(
                    format: "--start %.*g s is past the end of the file (%.3f s", digits, cfg.start ?? 0, d)
                if fileStart != 0 {
                    reason += String(format: ", counted from its first timestamp at %.3f s", fileStart)
                }
                throw CropZoomError(.usage, path: cfg.input, reason: reason + ")")
            }
            trimRange = (cfg.start ?? 0, cfg.end)
            let video = input.span(stream: videoIndex)
            videoSpan = (video.start.map { $0 - fileStart }, video.end.map { $0 - fileStart })
            var starts: [Int64] = []
            var ends: [Int64?] = []
            for i in 0..<input.streamCount {
                let tb = input.stream(i).pointee.time_base
                starts.append(Int64((s / av_q2d(tb)).rounded(.up)))
                ends.append(e.map { Int64(($0 / av_q2d(tb)).rounded(.up)) })
            }
            let shift = cfg.keepStartTime ? [Int64](repeating: 0, count: starts.count) : starts
            trim = Trim(start: starts, end: ends, shift: shift, subtitle: subtitles)
            if (cfg.start ?? 0) > 0 {
                let target = Int64((s - 1.0) * Double(AV_TIME_BASE))
                if target > Int64(fileStart * Double(AV_TIME_BASE)) {
                    _ = avformat_seek_file(input.pointer, -1, Int64.min, target, target, 0)
                }
            }
            let available = end.map { $0 - (cfg.start ?? 0) }
            duration = [available, cfg.end.map { $0 - (cfg.start ?? 0) }].compactMap { $0 }.min()
            startTime = 0
        } else {
            trimRange = nil
            videoSpan = (nil, nil)
            let origin = cfg.keepStartTime ? nil : Job.clockOrigin(input)
            trim = origin.map {
                Trim(
                    start: [Int64](repeating: .min, count: $0.count), end: [Int64?](repeating: nil, count: $0.count),
                    shift: $0, subtitle: subtitles)
            }
            duration = input.duration
            let shift = origin.map { Double($0[videoIndex]) * av_q2d(videoStream.pointee.time_base) } ?? 0
            startTime =
                videoStream.pointee.start_time != AVCode.noPTS
                ? Double(videoStream.pointee.start_time) * av_q2d(videoStream.pointee.time_base) - shift : 0
        }
        // Chapters: cut to the trim and moved with the streams.
        let second = Double(AV_TIME_BASE)
        let window =
            trimRange.map { r -> (Int64, Int64, Int64) in
                let from = Int64(((input.startSeconds + r.start) * second).rounded())
                let to = r.end.map { Int64(((input.startSeconds + $0) * second).rounded()) } ?? .max
                return (from, to, cfg.keepStartTime ? 0 : from)
            } ?? (.min, .max, 0)
        try check(
            cz_copy_chapters(output.pointer, input.pointer, window.0, window.1, window.2), "copying chapters",
            path: cfg.output)
        try muxer.writeHeader()
    }

    /// Per input stream, the earliest start time of any stream, in that stream's time base, when
    /// the input's times are a clock reading rather than presentation times: MPEG-TS/PS
    /// (`AVFMT_TS_DISCONT`) start wherever the encoder's clock stood. Nil for other inputs — an
    /// MP4's or Matroska's start (an empty edit) is deliberate and kept.
    static func clockOrigin(_ input: InputFormat) -> [Int64]? {
        guard input.pointer.pointee.iformat.pointee.flags & AVFMT_TS_DISCONT != 0 else { return nil }
        var earliest: (time: Int64, base: AVRational)? = nil
        for i in 0..<input.streamCount {
            let st = input.stream(i)
            let t = st.pointee.start_time
            guard t != AVCode.noPTS else { continue }
            if earliest.map({ av_compare_ts(t, st.pointee.time_base, $0.time, $0.base) < 0 }) ?? true {
                earliest = (t, st.pointee.time_base)
            }
        }
        guard let earliest, earliest.time != 0 else { return nil }
        return (0..<input.streamCount).map {
            av_rescale_q(earliest.time, earliest.base, input.stream($0).pointee.time_base)
        }
    }

    /// True for a QuickTime chapter track: FFmpeg 5.1's mov demuxer reads it into the file's
    /// chapters (`mov_read_chapters`), makes it a data stream and discards it (`AVDISCARD_ALL`).
    static func isChapterTrack(_ st: UnsafeMutablePointer<AVStream>, in input: InputFormat) -> Bool {
        input.pointer.pointee.nb_chapters > 0 && st.pointee.discard == AVDISCARD_ALL
            && st.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_DATA
    }

    /// A transformer for one worker (each owns its scalers and scratch frames).
    func makeTransformer(pool: FramePool?) -> Transformer {
        let timeBase = av_q2d(decoder.timeBase)
        let start = startTime
        return Transformer(
            plan: plan, outputFormat: outputFormat, outputFullRange: fullRange, matrix: matrix,
            scaler: configuration.scaler, kernel: configuration.kernel, pool: pool,
            frameTime: { pts in pts == AVCode.noPTS ? 0 : Double(pts) * timeBase - start },
            background: configuration.background, deinterlace: configuration.deinterlace,
            topFieldFirst: ![AV_FIELD_BB, AV_FIELD_BT].contains(decoder.context.pointer.pointee.field_order))
    }

    /// Moves a rendered frame's timestamps into the encoder's time base when they differ.
    @inline(__always)
    func stampForEncoder(_ out: Frame) {
        guard rescaleToEncoder, let encoder else { return }
        out.pts = av_rescale_q(out.pts, decoder.timeBase, encoder.timeBase)
        out.pointer.pointee.pkt_duration = av_rescale_q(
            out.pointer.pointee.pkt_duration, decoder.timeBase, encoder.timeBase)
    }

    /// Media seconds since the start for a frame pts in the decoder's time base.
    func mediaTime(_ pts: Int64) -> Double { Double(pts) * av_q2d(decoder.timeBase) - startTime }

    /// The same for a frame already stamped for the encoder (`stampForEncoder`).
    func mediaTime(encoderPTS pts: Int64) -> Double {
        Double(pts) * av_q2d(encoder?.timeBase ?? decoder.timeBase) - startTime
    }

    /// Writes a copied packet; one the muxer rejects as damaged is counted, not fatal
    /// (unless --strict). Returns false when it was skipped.
    func writeCopied(_ packet: Packet, stream: Int) throws(CropZoomError) -> Bool {
        do {
            try muxer.write(packet, stream: stream)
            return true
        } catch  where error.code == AVCode.invalidData && !configuration.strict {
            // The muxer's bitstream filter (ADTS to MP4, for one) rejects a damaged packet: it
            // cannot be stored, so it is skipped and counted.
            packet.unref()
            return false
        }
    }

    /// Trailer, close, rename into place.
    func finish() throws(CropZoomError) {
        try muxer.finish()
        let signal = cz_pending_signal()
        if signal != 0 { throw CropZoomError(.interrupted(signal: signal), reason: "interrupted") }
        try atomic?.commit()
    }
}

/// Input streams dropped for one reason, and the one note that says so.
struct DropGroup {
    var kind: String
    var reason: String
    var streams: [(index: Int, codec: String)]

    /// "subtitle stream #2 (subrip) dropped: mp4 cannot hold it", or for many
    /// "100 subtitle streams (#2–#101: subrip) dropped: mp4 cannot hold them".
    var note: String {
        let noun = kind.isEmpty ? "stream" : "\(kind) stream"
        guard streams.count > 1 else {
            return "\(noun) #\(streams[0].index) (\(streams[0].codec)) dropped: \(reason)"
        }
        var ranges: [String] = []
        var start = streams[0].index
        var last = start
        for s in streams.dropFirst() {
            if s.index == last + 1 {
                last = s.index
                continue
            }
            ranges.append(start == last ? "#\(start)" : "#\(start)–#\(last)")
            start = s.index
            last = s.index
        }
        ranges.append(start == last ? "#\(start)" : "#\(start)–#\(last)")
        var codecs: [String] = []
        for s in streams where !codecs.contains(s.codec) { codecs.append(s.codec) }
        let plural = reason.hasSuffix(" it") ? String(reason.dropLast(2)) + "them" : reason
        let which = "\(ranges.joined(separator: ", ")): \(codecs.joined(separator: ", "))"
        return "\(streams.count) \(noun)s (\(which)) dropped: \(plural)"
    }
}

/// What an engine counted while running a job.
struct EngineCounts {
    var framesIn = 0
    var framesOut = 0
    var duplicates = 0
    var audioPackets = 0
    var copiedDamaged = 0
    var audioCorrupt = 0
    var lastTime = 0.0
    var busy: [String: Double] = [:]
    var waits: [String: Double] = [:]
    var pool = PoolStatistics()
    var workers = 1
}
