import CCropZoomSystem
import CFFmpeg
import CropZoomCore
import CropZoomSystem
import Foundation

/// Owns an input `AVFormatContext` (`avformat_open_input` / `avformat_close_input`).
///
/// `@unchecked Sendable`: read only by the demux stage's thread.
package final class InputFormat: @unchecked Sendable {
    private(set) var pointer: UnsafeMutablePointer<AVFormatContext>
    package let path: String
    /// A live input's watch (stop request, no-data deadline); nil for a file.
    package let watch: IOWatch?
    /// Standard input's relay or spool, kept open as long as the input.
    package let standardInput: StandardInput?
    /// The job's cancel switch for a file's or URL's reads (`TranscodeJob.cancel` stops it): a network read
    /// waiting for data ends at once, whatever the process's signals.
    package let interrupt: IOWatch?
    /// An input read from memory: the `AVIOContext` it is read through (`pb`), kept open as long as the input and
    /// freed after it (a stored property is released after `deinit`'s body has closed the format context).
    package let memory: MemoryInput?

    /// Opens and probes `path` (`avformat_open_input` + `avformat_find_stream_info`): a file, a URL, or with
    /// `format` a demuxer or capture device by name (`av_find_input_format`: `x11grab`, `v4l2`, `lavfi` …) that
    /// takes `options` (its AVOptions: `framerate`, `video_size` …). Options it does not know are refused, by name.
    /// A `watch` interrupts the reads of a live source. `settings` are the ones refusals name (the format's, the
    /// options').
    ///
    /// With `bytes` the input is those bytes, read from memory through a custom `AVIOContext` (``MemoryInput``,
    /// `AVFMT_FLAG_CUSTOM_IO`), and `path` only names it in messages. Such an input opens nothing else: no file or
    /// URL it refers to (`protocol_whitelist` `none`: an MP4's external data reference, an HLS playlist's
    /// segments).
    ///
    /// `probe: false` leaves out `avformat_find_stream_info`: the streams are what the container's header says (an
    /// MP4's sample entries: codec, size, extradata, sample rate, channels), without what only decoding finds (pixel
    /// or sample format, aspect ratio, an audio frame's length, the profile), in a fraction of the time.
    package init(
        path given: String, format: String? = nil, options: [String: String] = [:], watch: IOWatch? = nil,
        interrupt: IOWatch? = nil, settings: (format: Setting, options: Setting) = (.inputFormat, .inputOption),
        bytes: [UInt8]? = nil, probe: Bool = true
    ) throws(CropZoomError) {
        // "-" is standard input, named "stdin" in messages (`StandardInput`: spooled when it must be).
        let path = given == "-" && bytes == nil ? "stdin" : given
        let standardInput: StandardInput?
        if given == "-" && bytes == nil {
            standardInput = try StandardInput()
        } else if bytes == nil && format == nil && watch == nil && InputFormat.spoolable(given) {
            // A server without byte ranges cannot give an MP4's index at the end and then its media: spooled.
            standardInput = try StandardInput(spooling: given, options: options, interrupt: interrupt)
        } else {
            standardInput = nil
        }
        let memory = try bytes.map { bytes throws(CropZoomError) in try MemoryInput(bytes, path: path) }
        let url = memory != nil ? "" : standardInput?.url ?? given
        var options = options
        if memory != nil { options["protocol_whitelist"] = "none" }
        self.path = path
        self.watch = watch
        self.standardInput = standardInput
        self.interrupt = interrupt
        self.memory = memory
        var demuxer: UnsafePointer<AVInputFormat>? = nil
        if let format {
            _ = InputFormat.registerDevices
            guard let f = av_find_input_format(format) else {
                throw CropZoomError(
                    .usage, setting: settings.format,
                    reason: "\(setting: settings.format) \(format): no such input format or device in this FFmpeg "
                        + "(try `ffmpeg -formats` and `ffmpeg -devices`)")
            }
            demuxer = f
        }
        var ctx: UnsafeMutablePointer<AVFormatContext>? = avformat_alloc_context()
        guard ctx != nil else {
            throw CropZoomError(.processing, what: "opening the input", path: path, reason: "out of memory")
        }
        ctx!.pointee.interrupt_callback = .watching(watch ?? interrupt)
        if let memory {
            // Ours to free, after the context: avformat_close_input leaves a custom pb open.
            ctx!.pointee.pb = memory.context
            ctx!.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
        }
        var dict: OpaquePointer? = nil
        for (key, value) in options.sorted(by: { $0.key < $1.key }) { av_dict_set(&dict, key, value, 0) }
        // A stalled pipe or FIFO blocks here too: registered so that a stop still ends the read (BlockedReads).
        let interruptCallback = ctx!.pointee.interrupt_callback
        cz_open_error_clear()
        let r = BlockedReads.shared.during(interruptCallback) {
            RawPath.withCString(url) { avformat_open_input(&ctx, $0, demuxer, &dict) }
        }
        var unused: [String] = []
        var entry: UnsafeMutablePointer<AVDictionaryEntry>? = nil
        while let e = av_dict_get(dict, "", entry, AV_DICT_IGNORE_SUFFIX) {
            unused.append(String(cString: e.pointee.key))
            entry = e
        }
        av_dict_free(&dict)
        if r >= 0, let first = unused.first {
            avformat_close_input(&ctx)
            throw CropZoomError(
                .usage, path: path, setting: settings.options,
                reason: "\(setting: settings.options) \(first): not an option of the \(format ?? "input")'s demuxer or "
                    + "protocol")
        }
        if r < 0 {
            var e = CropZoomError.ffmpeg(r, InputFormat.kind(for: r), what: "", path: path)
            if r == AVCode.invalidData && (memory?.looksLikeISOMedia ?? InputFormat.looksLikeISOMedia(url)) {
                e.reason =
                    "no index (moov): the recording was not finished, or the file is damaged (`cropzoom repair FILE "
                    + "--reference GOOD -o FIXED`, or --reference GOOD here, brings it back from a complete recording "
                    + "of the same camera)"
            } else if r == AVCode.invalidData {
                e.reason = "not a media file FFmpeg can read (\(e.reason.lowercased()))"
            } else if r == AVCode.eof {
                e.reason = "truncated: the file ends before its headers are complete"
            } else if let logged = String(validatingCString: cz_open_error()), !logged.isEmpty {
                // A device's or demuxer's own reason (x11grab's "Cannot open display :88.0", PulseAudio's), which
                // the return code names only as errno's text.
                e.reason = "\(logged) (\(e.reason))"
            } else if format == "pulse" {
                // FFmpeg 5.1's PulseAudio reader says nothing of why; these are the two ways it fails.
                e.reason =
                    "PulseAudio would not record from '\(given)': no server answers (PULSE_SERVER), or it has no such "
                    + "source (`pactl list short sources` lists them) (\(e.reason))"
            }
            throw e
        }
        // The context is closed here, before `pointer` is set: once every stored property is set,
        // a throwing init runs `deinit`, which would close it a second time.
        let r2 = probe ? BlockedReads.shared.during(interruptCallback) { avformat_find_stream_info(ctx, nil) } : 0
        if r2 < 0 {
            avformat_close_input(&ctx)
            throw CropZoomError.ffmpeg(r2, InputFormat.kind(for: r2), what: "reading stream information", path: path)
        }
        pointer = ctx!
    }

    /// A URL whose server may not seek, read through once when it does not (``StandardInput``): HTTP(S), FTP.
    package static func spoolable(_ url: String) -> Bool {
        ["http://", "https://", "ftp://"].contains { url.lowercased().hasPrefix($0) }
    }

    /// True when the file starts with an MP4/MOV box (`ftyp`, `mdat`, `moov`, `free`, `wide`,
    /// `skip`): FFmpeg's mov demuxer refuses such a file only when it finds no `moov`.
    package static func looksLikeISOMedia(_ path: String) -> Bool {
        let fd = RawPath.withCString(path) { open($0, O_RDONLY | O_CLOEXEC) }
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var head = [UInt8](repeating: 0, count: 8)
        guard head.withUnsafeMutableBytes({ Glibc.read(fd, $0.baseAddress, 8) }) == 8 else { return false }
        return isISOBoxType(Array(head[4..<8]))
    }

    /// True for the four bytes of a box type an MP4/MOV starts with (``looksLikeISOMedia(_:)``).
    package static func isISOBoxType(_ type: [UInt8]) -> Bool {
        ["ftyp", "mdat", "moov", "free", "wide", "skip"].contains(String(decoding: type, as: UTF8.self))
    }

    /// libavdevice's devices (capture: x11grab, v4l2, pulse, alsa, lavfi …) made known to
    /// `av_find_input_format`, once, loading libavdevice then (`cz_register_devices`).
    package static let registerDevices: Void = { _ = cz_register_devices() }()

    private static func kind(for code: Int32) -> CropZoomError.Kind {
        let signal = cz_pending_signal()
        return signal != 0 ? .interrupted(signal: signal) : .inputUnreadable
    }

    deinit {
        var p: UnsafeMutablePointer<AVFormatContext>? = pointer
        avformat_close_input(&p)
    }

    package var streamCount: Int { Int(pointer.pointee.nb_streams) }

    /// Stream `index`, borrowed (the view keeps this input open).
    package func stream(_ index: Int) -> StreamRef { StreamRef(pointer.pointee.streams[index]!, owner: self) }

    /// Short name of the demuxer (e.g. "mov,mp4,m4a,3gp,3g2,mj2").
    package var formatName: String { String(cString: pointer.pointee.iformat.pointee.name) }
    /// True when a stream's index (`avformat_index_get_entry`) places a sample beyond the end
    /// of the file: its tail is missing.
    package func indexPointsPastEnd() -> Bool {
        guard let pb = pointer.pointee.pb else { return false }
        let size = avio_size(pb)
        guard size > 0 else { return false }
        for i in 0..<streamCount {
            let st = stream(i)
            let n = avformat_index_get_entries_count(st.pointer)
            guard n > 0, let last = avformat_index_get_entry(st.pointer, n - 1) else { continue }
            if last.pointee.pos >= 0 && last.pointee.pos + Int64(last.pointee.size) > size { return true }
        }
        return false
    }

    /// The times are a clock reading, not presentation times (`AVFMT_TS_DISCONT`: MPEG-TS/PS).
    package var hasClockTimestamps: Bool { pointer.pointee.iformat.pointee.flags & AVFMT_TS_DISCONT != 0 }
    /// Chapters the demuxer read.
    package var chapterCount: Int { Int(pointer.pointee.nb_chapters) }

    /// Duration in seconds, if known.
    package var duration: Double? {
        let d = pointer.pointee.duration
        return d > 0 && d != AVCode.noPTS ? Double(d) / Double(AV_TIME_BASE) : nil
    }

    /// Where the media ends, in seconds of the timestamps' clock, by the container's duration. A
    /// duration the header states (`AVFMT_DURATION_FROM_STREAM`: MP4's movie duration, Matroska's
    /// segment duration) is measured from 0 — an MP4 with a 10 s empty edit and 4 s of video says
    /// 14 s; one FFmpeg estimates (MPEG-TS from its timestamps) from the first timestamp.
    package var declaredEnd: Double? {
        guard let d = duration else { return nil }
        if pointer.pointee.duration_estimation_method == AVFMT_DURATION_FROM_STREAM { return d + min(0, startSeconds) }
        return startSeconds + d
    }

    /// The file's first timestamp in seconds (`AVFormatContext.start_time`), 0 when unknown.
    package var startSeconds: Double {
        let s = pointer.pointee.start_time
        return s != AVCode.noPTS ? Double(s) / Double(AV_TIME_BASE) : 0
    }

    /// Where `stream` (or the whole input) starts and ends, in seconds of the timestamps' clock:
    /// each stream's start plus its duration; for the whole input without stream durations, the
    /// container's (``declaredEnd``).
    package func span(stream: Int? = nil) -> (start: Double?, end: Double?) {
        var start: Double? = nil
        var end: Double? = nil
        for i in stream.map({ [$0] }) ?? Array(0..<streamCount) {
            let st = self.stream(i)
            guard let first = st.startTime else { continue }
            let tb = st.timeBase.seconds
            let s = Double(first) * tb
            start = min(start ?? s, s)
            if st.duration > 0 { end = max(end ?? s, s + Double(st.duration) * tb) }
        }
        if end == nil && stream == nil { end = declaredEnd }
        return (start, end)
    }

    /// `av_find_best_stream` for video; nil when there is none. An attached picture (the cover
    /// art of an MP3 or M4A) is not video: another video stream, or nil.
    package func bestVideoStream() -> Int? {
        let r = av_find_best_stream(pointer, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0)
        guard r >= 0 else { return nil }
        if !isAttachedPicture(Int(r)) { return Int(r) }
        return (0..<streamCount).first {
            stream($0).mediaType == .video && !isAttachedPicture($0)
        }
    }

    /// A cover picture (`AV_DISPOSITION_ATTACHED_PIC`).
    package func isAttachedPicture(_ index: Int) -> Bool {
        stream(index).isAttachedPicture
    }

    /// `av_read_frame` into `packet`. A read error throws with FFmpeg's code (`CropZoomError.code`),
    /// for the caller to skip or report.
    package func read(into packet: Packet) throws(CropZoomError) -> AVStep<Void> {
        let r = BlockedReads.shared.during(pointer.pointee.interrupt_callback) {
            av_read_frame(pointer, packet.pointer)
        }
        if r == AVCode.again { return .again }
        if r == AVCode.eof { return .endOfStream }
        try check(r, .inputUnreadable, "reading", path: path)
        return .value(())
    }
}

/// Owns an output `AVFormatContext` (`avformat_alloc_output_context2` / `avformat_free_context`)
/// and its `AVIOContext` (`avio_open2` / `avio_closep`).
///
/// `@unchecked Sendable`: written only by the mux stage's thread.
package final class OutputFormat: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<AVFormatContext>
    /// Where bytes are written (the temporary file).
    package let path: String
    /// The path the user named, for messages.
    package let displayPath: String
    /// Written as a stream that cannot be rewound (a pipe, a FIFO, a character device).
    package let streaming: Bool
    private var ioOpen = false
    /// For a live recording: what interrupts writing (its stop); nil: a signal does (set before the header).
    package var watch: IOWatch?
    /// Options of the output's protocol (`avio_open2`), set before the header.
    package var protocolOptions: [String: String] = [:]

    /// `avformat_alloc_output_context2` for the muxer guessed from `displayPath` (or named by
    /// `formatName`), writing to `path`.
    package init(path: String, displayPath: String, formatName: String?, streaming: Bool = false) throws(CropZoomError)
    {
        self.path = path
        self.displayPath = displayPath
        self.streaming = streaming
        var ctx: UnsafeMutablePointer<AVFormatContext>? = nil
        let name = formatName ?? OutputFormat.networkMuxer(displayPath)
        let r = RawPath.withCString(displayPath) { avformat_alloc_output_context2(&ctx, nil, name, $0) }
        guard r >= 0, let c = ctx else {
            throw CropZoomError(
                .usage, path: displayPath,
                reason:
                    "cannot tell the output format from the file name (use a known extension such as .mp4, .mov, "
                    + ".mkv, .webm, .ts)"
            )
        }
        // The muxer reopens `url` (faststart rewrites the file): point it at the temporary file.
        av_freep(&c.pointee.url)
        c.pointee.url = RawPath.withCString(path) { av_strdup($0) }
        pointer = c
    }

    deinit {
        if ioOpen { avio_closep(&pointer.pointee.pb) }
        avformat_free_context(pointer)
    }

    var outputFormat: UnsafePointer<AVOutputFormat> { pointer.pointee.oformat }
    package var formatName: String { String(cString: outputFormat.pointee.name) }

    /// Can this container store `codec`? `avformat_query_codec` where the muxer can tell; where
    /// it cannot (AVERROR_PATCHWELCOME: it has no codec list) what is known of that muxer
    /// (`OutputFormat.knownCodecs`), else nothing but its default codecs (which the call accepts).
    package func canStore(_ codec: AVCodecID) -> Bool {
        if OutputFormat.refusedAtHeader[formatName]?.contains(codec) == true { return false }
        let r = avformat_query_codec(outputFormat, codec, FF_COMPLIANCE_NORMAL)
        if r >= 0 { return r != 0 }
        return OutputFormat.knownCodecs[formatName]?.contains(codec) ?? false
    }

    /// FFmpeg 5.1's muxers without a codec list, and what they really store: MPEG-TS the codecs
    /// `mpegtsenc` gives a stream type of their own (any other becomes unreadable private data),
    /// MPEG-PS the ones `mpegenc` gives stream ids (any other audio is written as MPEG audio).
    package static let knownCodecs: [String: Set<AVCodecID>] = {
        let ts: Set<AVCodecID> = [
            AV_CODEC_ID_MPEG1VIDEO, AV_CODEC_ID_MPEG2VIDEO, AV_CODEC_ID_MPEG4, AV_CODEC_ID_H264, AV_CODEC_ID_HEVC,
            AV_CODEC_ID_CAVS, AV_CODEC_ID_AVS2, AV_CODEC_ID_AVS3, AV_CODEC_ID_DIRAC, AV_CODEC_ID_VC1,
            AV_CODEC_ID_MP2, AV_CODEC_ID_MP3, AV_CODEC_ID_AAC, AV_CODEC_ID_AAC_LATM, AV_CODEC_ID_AC3, AV_CODEC_ID_EAC3,
            AV_CODEC_ID_DTS, AV_CODEC_ID_TRUEHD, AV_CODEC_ID_OPUS, AV_CODEC_ID_S302M,
            AV_CODEC_ID_DVB_SUBTITLE, AV_CODEC_ID_DVB_TELETEXT, AV_CODEC_ID_SMPTE_KLV, AV_CODEC_ID_TIMED_ID3,
        ]
        let ps: Set<AVCodecID> = [
            AV_CODEC_ID_MPEG1VIDEO, AV_CODEC_ID_MPEG2VIDEO, AV_CODEC_ID_H264,
            AV_CODEC_ID_MP1, AV_CODEC_ID_MP2, AV_CODEC_ID_MP3, AV_CODEC_ID_AC3, AV_CODEC_ID_DTS,
            AV_CODEC_ID_DVD_SUBTITLE,
        ]
        return ["mpegts": ts, "mpeg": ps, "vob": ps, "dvd": ps, "svcd": ps, "vcd": ps]
    }()

    /// Codecs FFmpeg 5.1's MP4/MOV muxer lists but refuses when writing the header (`mov_init`):
    /// FLAC and TrueHD in MP4 are experimental; those and Opus, VP9 and AV1 are MP4-only.
    package static let refusedAtHeader: [String: Set<AVCodecID>] = {
        let experimental: Set<AVCodecID> = [AV_CODEC_ID_FLAC, AV_CODEC_ID_TRUEHD]
        let mp4Only = experimental.union([AV_CODEC_ID_OPUS, AV_CODEC_ID_VP9, AV_CODEC_ID_AV1])
        var table: [String: Set<AVCodecID>] = ["mp4": experimental]
        for name in ["mov", "ismv", "3gp", "3g2", "psp", "ipod", "f4v"] { table[name] = mp4Only }
        return table
    }()

    /// The container's own codec for `type` (`AVOutputFormat.video_codec`/`audio_codec`/
    /// `subtitle_codec`); AV_CODEC_ID_NONE when it holds none.
    func defaultCodec(_ type: AVMediaType) -> AVCodecID {
        switch type {
        case AVMEDIA_TYPE_VIDEO: return outputFormat.pointee.video_codec
        case AVMEDIA_TYPE_AUDIO: return outputFormat.pointee.audio_codec
        case AVMEDIA_TYPE_SUBTITLE: return outputFormat.pointee.subtitle_codec
        default: return AV_CODEC_ID_NONE
        }
    }

    /// Whether a copied stream may keep its input's four-character code (`codec_tag`) here, as the ffmpeg CLI
    /// decides: the muxer has no tag table, its table gives this codec for that tag, or it has no tag at all for this
    /// codec (`av_codec_get_id`, `av_codec_get_tag2`). A damaged input's tag (`[0][0][0]a` for AAC) is dropped, and
    /// the muxer picks the codec's own.
    package func acceptsTag(_ tag: UInt32, for codec: AVCodecID) -> Bool {
        guard let table = pointer.pointee.oformat.pointee.codec_tag else { return true }
        if av_codec_get_id(table, tag) == codec { return true }
        var any: UInt32 = 0
        return av_codec_get_tag2(table, codec, &any) == 0
    }

    /// `avformat_new_stream`.
    package func addStream() throws(CropZoomError) -> StreamRef {
        guard let st = avformat_new_stream(pointer, nil) else {
            throw CropZoomError(
                .processing, what: "adding an output stream", path: displayPath, reason: "out of memory")
        }
        return StreamRef(st, owner: self)
    }

    package var streamCount: Int { Int(pointer.pointee.nb_streams) }
    /// Stream `index`, borrowed (the view keeps this output alive).
    package func stream(_ index: Int) -> StreamRef { StreamRef(pointer.pointee.streams[index]!, owner: self) }

    package var needsGlobalHeader: Bool { outputFormat.pointee.flags & AVFMT_GLOBALHEADER != 0 }

    /// The muxer FFmpeg would choose for `format` (a name) or else `path`'s extension (`av_guess_format`).
    package static func guessMuxer(format: String?, path: String) -> String? {
        let network = format == nil ? networkMuxer(path) : nil
        return av_guess_format(network ?? format, path, nil).map { String(cString: $0.pointee.name) }
    }

    /// The container a network URL carries unless `--format` says otherwise: MPEG-TS over UDP, SRT, TCP and RTP
    /// (`rtp_mpegts`), FLV over RTMP; nil for anything else.
    package static func networkMuxer(_ path: String) -> String? {
        switch RawPath.scheme(of: path) {
        case "udp", "srt", "tcp": return "mpegts"
        case "rtp": return "rtp_mpegts"
        case "rtmp", "rtmps": return "flv"
        default: return nil
        }
    }

    /// The file's tags from `input` (`av_dict_copy` of the container metadata), but for `keys`.
    package func copyMetadata(from input: InputFormat, except keys: [String] = []) {
        av_dict_copy(&pointer.pointee.metadata, input.pointer.pointee.metadata, 0)
        for key in keys { removeMetadata(key) }
    }

    /// The keys of the file's tags (`av_dict_get` over the container metadata).
    package var metadataKeys: [String] {
        var keys: [String] = []
        var entry: UnsafeMutablePointer<AVDictionaryEntry>? = nil
        while let e = av_dict_get(pointer.pointee.metadata, "", entry, AV_DICT_IGNORE_SUFFIX) {
            keys.append(String(cString: e.pointee.key))
            entry = e
        }
        return keys
    }

    /// Removes the file's tag `key` (`av_dict_set` with no value).
    package func removeMetadata(_ key: String) { av_dict_set(&pointer.pointee.metadata, key, nil, 0) }

    /// `input`'s chapters in [from, to) (`AV_TIME_BASE` units), moved by `shift` (`cz_copy_chapters`).
    package func copyChapters(from input: InputFormat, from start: Int64, to end: Int64, shift: Int64)
        throws(CropZoomError)
    {
        try check(cz_copy_chapters(pointer, input.pointer, start, end, shift), "copying chapters", path: displayPath)
    }

    /// `avio_open2` on the temporary path, then `avformat_write_header` with muxer options.
    package func writeHeader(options: [String: String]) throws(CropZoomError) {
        var cb = AVIOInterruptCB(callback: cz_interrupt_callback, opaque: nil)
        if let watch {
            // A live recording's output outlives the signal that ends the recording.
            cb = AVIOInterruptCB(callback: cz_watch_only_callback, opaque: UnsafeMutableRawPointer(watch.pointer))
        }
        if outputFormat.pointee.flags & AVFMT_NOFILE == 0 {
            var protocolDict: OpaquePointer? = nil
            for (k, v) in protocolOptions { av_dict_set(&protocolDict, k, v, 0) }
            defer { av_dict_free(&protocolDict) }
            let opened = RawPath.withCString(path) {
                avio_open2(&pointer.pointee.pb, $0, AVIO_FLAG_WRITE, &cb, &protocolDict)
            }
            try check(
                opened, .processing,
                "creating the output file", path: displayPath)
            ioOpen = true
        }
        var dict: OpaquePointer? = nil
        for (k, v) in options { av_dict_set(&dict, k, v, 0) }
        defer { av_dict_free(&dict) }
        cz_mux_error_clear()
        try checkMux(avformat_write_header(pointer, &dict), "writing the header")
        try checkIO("writing the header")
    }

    /// `av_interleaved_write_frame`: takes the packet's payload (the packet is left empty).
    package func write(_ packet: Packet) throws(CropZoomError) {
        cz_mux_error_clear()
        try checkMux(av_interleaved_write_frame(pointer, packet.pointer), "writing")
        try checkIO("writing")
    }

    /// Flushes the interleaving queue, `av_write_trailer`, then `avio_closep`, reporting any
    /// write error (a full disk included).
    package func finish() throws(CropZoomError) {
        cz_mux_error_clear()
        try checkMux(av_write_trailer(pointer), "finishing the file")
        try checkIO("finishing the file")
        if ioOpen {
            ioOpen = false
            try check(avio_closep(&pointer.pointee.pb), .processing, "closing the file", path: displayPath)
        }
    }

    /// `check` for a muxer call: the reason adds what the muxer logged (`cz_mux_error`), e.g. `Invalid argument (the
    /// muxer: Error parsing AAC extradata, unable to determine samplerate)`.
    private func checkMux(_ code: Int32, _ what: String) throws(CropZoomError) {
        guard code < 0 else { return }
        var error = CropZoomError.ffmpeg(code, .processing, what: what, path: displayPath)
        let said = String(cString: cz_mux_error())
        if !said.isEmpty { error.reason += " (the muxer: \(said))" }
        throw error
    }

    /// `AVIOContext.error`: avio records write failures there rather than returning them.
    private func checkIO(_ what: String) throws(CropZoomError) {
        if let pb = pointer.pointee.pb, pb.pointee.error < 0 {
            throw CropZoomError.ffmpeg(pb.pointee.error, .processing, what: what, path: displayPath)
        }
    }
}
