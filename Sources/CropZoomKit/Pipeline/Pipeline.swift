import CFFmpeg
import Foundation

/// One transcode: demux → decode → transform → encode → mux, with the output written
/// atomically. Owns every stage; the stages own their FFmpeg objects.
public final class Pipeline {
    public let configuration: TranscodeConfiguration
    /// Called with one-line notices (a stream re-encoded or dropped, …).
    public var onNotice: (String) -> Void = { _ in }
    /// Called a few times a second with progress.
    public var onProgress: ((ProgressEvent) -> Void)? = nil

    public init(configuration: TranscodeConfiguration) {
        self.configuration = configuration
    }

    /// What happens to each input stream.
    enum Route {
        case video(output: Int)
        case copy(output: Int)
        case reencode(AudioTranscoder, output: Int)
        case drop
    }

    /// Installs the SIGINT/SIGTERM handlers that let a run stop cleanly (exit 130/143).
    public static func installSignalHandlers() { cz_install_signal_handlers() }

    /// Runs the transcode. On any error nothing is left at the output path. A failure caused by
    /// a signal (FFmpeg's I/O gives up once the interrupt callback fires) is reported as the
    /// interruption it is.
    public func run() throws(CropZoomError) -> TranscodeSummary {
        do {
            return try transcode()
        } catch {
            let signal = cz_pending_signal()
            if signal != 0 { throw CropZoomError(.interrupted(signal: signal), path: configuration.output, reason: "interrupted; nothing written") }
            throw error
        }
    }

    private func transcode() throws(CropZoomError) -> TranscodeSummary {
        let cfg = configuration
        let started = Date()
        av_log_set_level(cfg.verbose ? AV_LOG_WARNING : AV_LOG_QUIET)
        try Pipeline.checkInput(cfg.input)
        let atomic = try AtomicOutput(target: cfg.output, input: cfg.input, overwrite: cfg.overwrite)
        defer { atomic.discard() }

        // Demux and pick the video stream.
        let demuxer = try Demuxer(path: cfg.input)
        let input = demuxer.input
        guard let videoIndex = input.bestVideoStream() else {
            throw CropZoomError(.inputUnreadable, path: cfg.input, reason: "no video stream")
        }
        let videoStream = input.stream(videoIndex)
        let threads = 0 // FFmpeg picks per core; the multi-core engine will budget this.
        let decoder = try VideoDecoder(input: input, streamIndex: videoIndex, threads: threads)
        let dec = decoder.context.pointer
        guard dec.pointee.width > 0, dec.pointee.height > 0, dec.pointee.pix_fmt != AV_PIX_FMT_NONE else {
            throw CropZoomError(.inputUnreadable, path: cfg.input, reason: "the video stream has no decodable pictures")
        }

        // Output container and video encoder.
        let output = try OutputFormat(path: atomic.temporary, displayPath: cfg.output, formatName: nil)
        let muxer = Muxer(output: output)
        let codec = try VideoEncoder.findCodec(named: cfg.codec, output: output)
        let inFormat = dec.pointee.pix_fmt
        let outFormat = try VideoEncoder.choosePixelFormat(codec: codec, input: inFormat, requested: cfg.pixelFormat)
        let inInfo = PixelFormatInfo(inFormat)!
        let outInfo = PixelFormatInfo(outFormat)!
        let fullRange = outInfo.isJ || inInfo.isJ || dec.pointee.color_range == AVCOL_RANGE_JPEG

        // Geometry.
        let source = SourcePicture(
            width: Int(dec.pointee.width), height: Int(dec.pointee.height),
            sampleAspect: Pipeline.sampleAspect(videoStream, dec),
            display: Pipeline.displayOrientation(videoStream),
            alignX: 1 << inInfo.log2ChromaW, alignY: 1 << inInfo.log2ChromaH)
        let plan = try GeometryPlan.make(cfg.geometry, source: source, outputAlign: outInfo.alignment)

        let sar = plan.keepsInputAspectAndMatrix ? dec.pointee.sample_aspect_ratio : AVRational(num: 1, den: 1)
        var frameRate = videoStream.pointee.avg_frame_rate
        if frameRate.num <= 0 || frameRate.den <= 0 { frameRate = videoStream.pointee.r_frame_rate }
        let encoder = try VideoEncoder(.init(
            codec: codec, width: plan.output.width, height: plan.output.height,
            pixelFormat: outFormat, fullRange: fullRange, timeBase: videoStream.pointee.time_base,
            frameRate: frameRate, sampleAspect: sar, colorSource: UnsafePointer(videoStream.pointee.codecpar),
            globalHeader: output.needsGlobalHeader, threads: threads,
            crf: cfg.crf, preset: cfg.preset, bitrate: cfg.bitrate, path: cfg.output))

        // Route every input stream.
        var routes = [Route](repeating: .drop, count: input.streamCount)
        var notices: [String] = []
        func notice(_ s: String) { notices.append(s); onNotice(s) }
        var audioCopied = 0, audioReencoded = 0, otherCopied = 0, dropped = 0
        let sameFamily = input.formatName.split(separator: ",").contains { $0 == output.formatName || ($0 == "mov" && output.formatName == "mp4") || ($0 == "mp4" && output.formatName == "mov") }
        for i in 0..<input.streamCount {
            let st = input.stream(i)
            let par = st.pointee.codecpar!
            let codecName = String(cString: avcodec_get_name(par.pointee.codec_id))
            if i == videoIndex {
                let out = try muxer.addEncodedStream(from: encoder.context.pointer, input: st)
                if plan.keepsInputAspectAndMatrix { muxer.copyDisplayMatrix(from: st, to: out) }
                routes[i] = .video(output: out)
                continue
            }
            switch par.pointee.codec_type {
            case AVMEDIA_TYPE_AUDIO:
                if cfg.audio == .none { dropped += 1; continue }
                let canCopy = output.canStore(par.pointee.codec_id)
                if cfg.audio == .aac || (cfg.audio == .auto && !canCopy) {
                    let target = cfg.audio == .aac ? "aac" : (output.formatName == "webm" ? "libopus" : "aac")
                    let t = try AudioTranscoder(input: input, streamIndex: i, encoderName: target, globalHeader: output.needsGlobalHeader)
                    let out = try muxer.addEncodedStream(from: t.encoder.pointer, input: st)
                    routes[i] = .reencode(t, output: out)
                    audioReencoded += 1
                    if cfg.audio == .auto {
                        notice("audio stream #\(i) (\(codecName)) cannot go in \(output.formatName); re-encoding it to \(target == "aac" ? "AAC" : "Opus")")
                    }
                } else if canCopy {
                    let mkvIn = input.formatName.hasPrefix("matroska")
                    let mkvOut = output.formatName == "matroska" || output.formatName == "webm"
                    routes[i] = .copy(output: try muxer.addCopiedStream(
                        from: st, sameContainerFamily: sameFamily,
                        matroskaCodecDelay: mkvIn && mkvOut && par.pointee.codec_id == AV_CODEC_ID_OPUS))
                    audioCopied += 1
                } else {
                    throw CropZoomError(.usage, path: cfg.output,
                                        reason: "audio stream #\(i) (\(codecName)) cannot be copied into \(output.formatName) (--audio copy); use --audio auto or aac")
                }
            case AVMEDIA_TYPE_SUBTITLE, AVMEDIA_TYPE_DATA:
                let kind = par.pointee.codec_type == AVMEDIA_TYPE_SUBTITLE ? "subtitle" : "data"
                if par.pointee.codec_id != AV_CODEC_ID_NONE && output.canStore(par.pointee.codec_id) {
                    routes[i] = .copy(output: try muxer.addCopiedStream(from: st, sameContainerFamily: sameFamily))
                    otherCopied += 1
                } else {
                    dropped += 1
                    notice("\(kind) stream #\(i) (\(codecName)) dropped: \(output.formatName) cannot hold it")
                }
            case AVMEDIA_TYPE_VIDEO:
                dropped += 1
                let what = st.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC != 0 ? "cover picture" : "video stream"
                notice("\(what) #\(i) (\(codecName)) dropped: cropzoom transforms one video stream (#\(videoIndex))")
            default:
                dropped += 1
                notice("stream #\(i) (\(codecName)) dropped: \(output.formatName) cannot hold it")
            }
        }
        av_dict_copy(&output.pointer.pointee.metadata, input.pointer.pointee.metadata, 0)
        try check(cz_copy_chapters(output.pointer, input.pointer), "copying chapters", path: cfg.output)

        // The pool between transform and encode: enough for the frames an encoder may still
        // reference plus one in flight.
        let pool = FramePool(width: plan.output.width, height: plan.output.height, format: outFormat, capacity: 8)
        let transformer = Transformer(plan: plan, outputFormat: outFormat, outputFullRange: fullRange,
                                      scaler: cfg.scaler, pool: pool)
        try muxer.writeHeader()

        // The main loop, on this thread: read, route, and push through the stages.
        let packet = try Packet()
        var framesIn = 0, framesOut = 0, duplicates = 0, audioPackets = 0, copiedDamaged = 0
        var lastPTS: Int64? = nil
        let videoOut: Int = { if case .video(let o) = routes[videoIndex] { return o }; return 0 }()
        let duration = input.duration
        let startTime = videoStream.pointee.start_time != AVCode.noPTS
            ? Double(videoStream.pointee.start_time) * av_q2d(videoStream.pointee.time_base) : 0
        var lastReport = Date.distantPast
        let rescaleToEncoder = av_cmp_q(decoder.timeBase, encoder.timeBase) != 0
        var lastTime = 0.0

        func writeVideo(_ pkt: Packet) throws(CropZoomError) {
            try muxer.write(pkt, stream: videoOut)
        }
        func handle(_ frame: Frame) throws(CropZoomError) {
            framesIn += 1
            let pts = frame.presentationTime
            if let last = lastPTS, pts != AVCode.noPTS, pts <= last {
                duplicates += 1
                return
            }
            if pts != AVCode.noPTS { lastPTS = pts }
            let out = try transformer.transform(frame)
            out.pointer.pointee.pkt_duration = frame.pointer.pointee.pkt_duration
            if rescaleToEncoder {
                out.pts = av_rescale_q(out.pts, decoder.timeBase, encoder.timeBase)
                out.pointer.pointee.pkt_duration = av_rescale_q(out.pointer.pointee.pkt_duration, decoder.timeBase, encoder.timeBase)
            }
            do {
                try encoder.encode(out, writeVideo)
            } catch {
                pool.release(out)
                throw error
            }
            pool.release(out)
            framesOut += 1
            if let onProgress, pts != AVCode.noPTS {
                lastTime = Double(pts) * av_q2d(decoder.timeBase) - startTime
                let now = Date()
                if now.timeIntervalSince(lastReport) >= 0.25 {
                    lastReport = now
                    onProgress(ProgressEvent(frames: framesOut, time: lastTime, duration: duration,
                                             elapsed: now.timeIntervalSince(started)))
                }
            }
        }

        readLoop: while true {
            let signal = cz_pending_signal()
            if signal != 0 { throw CropZoomError(.interrupted(signal: signal), reason: "interrupted") }
            switch try demuxer.read(into: packet, strict: cfg.strict) {
            case .again: continue
            case .endOfStream: break readLoop
            case .value:
                defer { packet.unref() }
                guard packet.streamIndex < routes.count else { continue }
                switch routes[packet.streamIndex] {
                case .video:
                    try decoder.decode(packet, strict: cfg.strict, handle)
                case .copy(let out):
                    if input.stream(packet.streamIndex).pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_AUDIO { audioPackets += 1 }
                    do {
                        try muxer.write(packet, stream: out)
                    } catch where error.code == AVCode.invalidData && !cfg.strict {
                        // The muxer's bitstream filter (ADTS to MP4, for one) rejects a damaged
                        // packet: it cannot be stored, so it is skipped and counted.
                        copiedDamaged += 1
                    }
                case .reencode(let t, let out):
                    audioPackets += 1
                    try t.transcode(packet) { (p: Packet) throws(CropZoomError) in try muxer.write(p, stream: out) }
                case .drop:
                    break
                }
            }
        }
        // Drain: decoder, encoder, audio encoders.
        try decoder.decode(nil, strict: cfg.strict, handle)
        try encoder.encode(nil, writeVideo)
        var audioCorrupt = 0
        for case .reencode(let t, let out) in routes {
            try t.transcode(nil) { (p: Packet) throws(CropZoomError) in try muxer.write(p, stream: out) }
            audioCorrupt += t.corruptPackets
        }
        if framesOut == 0 {
            throw CropZoomError(.inputUnreadable, path: cfg.input, reason: "no video frame could be decoded")
        }
        try muxer.finish()
        let signal = cz_pending_signal()
        if signal != 0 { throw CropZoomError(.interrupted(signal: signal), reason: "interrupted") }
        try atomic.commit()

        return TranscodeSummary(
            output: cfg.output, outputWidth: plan.output.width, outputHeight: plan.output.height,
            videoCodec: encoder.context.name, pixelFormat: pixelFormatName(outFormat),
            framesIn: framesIn, framesOut: framesOut,
            corruptSkipped: decoder.corruptPackets + demuxer.skippedErrors + audioCorrupt + copiedDamaged,
            duplicateTimestampsDropped: duplicates,
            audioStreamsCopied: audioCopied, audioStreamsReencoded: audioReencoded,
            otherStreamsCopied: otherCopied, streamsDropped: dropped, audioPackets: audioPackets,
            seconds: Date().timeIntervalSince(started), mediaDuration: duration ?? lastTime,
            notices: notices, pool: pool.snapshot())
    }

    /// Refuses missing, unreadable, directory and empty inputs with a precise reason.
    static func checkInput(_ path: String) throws(CropZoomError) {
        var st = stat()
        guard stat(path, &st) == 0 else {
            throw CropZoomError(.inputUnreadable, path: path, reason: String(cString: strerror(errno)))
        }
        if st.st_mode & S_IFMT == S_IFDIR {
            throw CropZoomError(.inputUnreadable, path: path, reason: "is a directory, not a media file")
        }
        if st.st_mode & S_IFMT == S_IFREG && st.st_size == 0 {
            throw CropZoomError(.inputUnreadable, path: path, reason: "empty file (0 bytes)")
        }
        guard access(path, R_OK) == 0 else {
            throw CropZoomError(.inputUnreadable, path: path, reason: String(cString: strerror(errno)))
        }
    }

    /// The orientation a player applies, from the stream's display matrix side data.
    /// HTC phones wrote Matroska files with no matrix and the rotation in the track name
    /// (`htc_video_rotA-090`); players such as ExoPlayer honour it, and so does cropzoom.
    static func displayOrientation(_ st: UnsafeMutablePointer<AVStream>) -> Orientation {
        var size: Int = 0
        guard let data = av_stream_get_side_data(st, AV_PKT_DATA_DISPLAYMATRIX, &size), size >= 36 else {
            if let title = av_dict_get(st.pointee.metadata, "title", nil, 0).map({ String(cString: $0.pointee.value) }),
               title.hasPrefix("htc_video_rotA-"), let degrees = Int(title.dropFirst("htc_video_rotA-".count)) {
                return Orientation.rotation(clockwise: degrees) ?? .identity
            }
            return .identity
        }
        let m = data.withMemoryRebound(to: Int32.self, capacity: 9) { Array(UnsafeBufferPointer(start: $0, count: 9)) }
        return Orientation(displayMatrix: m) ?? .identity
    }

    static func sampleAspect(_ st: UnsafeMutablePointer<AVStream>, _ dec: UnsafeMutablePointer<AVCodecContext>) -> Double {
        var r = st.pointee.sample_aspect_ratio
        if r.num <= 0 || r.den <= 0 { r = dec.pointee.sample_aspect_ratio }
        if r.num <= 0 || r.den <= 0 { return 1 }
        return av_q2d(r)
    }
}
