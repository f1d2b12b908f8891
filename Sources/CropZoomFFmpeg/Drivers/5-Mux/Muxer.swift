import CFFmpeg
import CropZoomCore

/// The mux stage: owns the output file, its streams and the mapping from input streams, and
/// interleaves packets by timestamp (`av_interleaved_write_frame`).
package final class Muxer: @unchecked Sendable {
    // @unchecked Sendable: owned and driven by one thread (the mux stage).
    package let output: OutputFormat
    /// Source time base for each output stream (where its packets' timestamps come from).
    package private(set) var sourceTimeBase: [TimeBase] = []
    package private(set) var packetsWritten: [Int] = []
    /// Per stream: the last 16 packets' pts, before and after rescaling to the container's time
    /// base (a ring; packets come in decode order, so a frame's neighbours in time are among the
    /// last few written).
    private var recentPTS: [[(source: Int64, written: Int64)]] = []
    private static let recentCount = 16
    /// Per stream: packets whose distinct time became the previous packet's in the container's
    /// coarser time base (2000 fps into Matroska's 1 ms steps).
    package private(set) var mergedTimes: [Int] = []

    /// `live`, `segment`, `hlsTime`: fixed by the set-up (see each property).
    package init(
        output: OutputFormat, live: Bool = false, segment: (format: String, seconds: Double)? = nil,
        hlsTime: Double? = nil
    ) {
        self.output = output
        self.live = live
        self.segment = segment
        self.hlsTime = hlsTime
    }

    /// Adds a stream that receives encoded packets from `encoder`.
    func addEncodedStream(from encoder: UnsafeMutablePointer<AVCodecContext>, input: StreamRef?)
        throws(CropZoomError) -> Int
    {
        let st = try output.addStream()
        try check(
            avcodec_parameters_from_context(st.pointer.pointee.codecpar, encoder), "configuring an output stream",
            path: output.displayPath)
        st.pointer.pointee.time_base = encoder.pointee.time_base
        if let input {
            st.pointer.pointee.disposition = input.pointer.pointee.disposition
            Muxer.copyTags(
                from: input.pointer.pointee.metadata, to: &st.pointer.pointee.metadata,
                dropping: Muxer.describesEncoding)
            st.pointer.pointee.avg_frame_rate = input.pointer.pointee.avg_frame_rate
        }
        track(TimeBase(encoder.pointee.time_base))
        return Int(st.pointer.pointee.index)
    }

    /// Starts the bookkeeping of a new output stream whose packets come in `base` (the source's time base).
    private func track(_ base: TimeBase) {
        sourceTimeBase.append(base)
        packetsWritten.append(0)
        recentPTS.append(Array(repeating: (AVCode.noPTS, AVCode.noPTS), count: Muxer.recentCount))
        mergedTimes.append(0)
    }

    /// True for a per-stream tag that describes how the input was encoded (its encoder, VP9 alpha
    /// mode, mkvmerge's statistics, the MP4 vendor): wrong on a re-encoded stream.
    package static func describesEncoding(_ key: String) -> Bool {
        let k = key.lowercased()
        // mkvmerge writes the statistics with a language suffix too (BPS-eng).
        let base = k.split(separator: "-").first.map(String.init) ?? k
        let known = [
            "encoder", "encoder_options", "alpha_mode", "bps", "duration", "number_of_frames",
            "number_of_bytes", "vendor_id",
        ]
        return known.contains(base) || k.hasPrefix("_statistics_")
    }

    /// Copies the entries of `source` for which `drop` is false (`av_dict_get` / `av_dict_set`).
    package static func copyTags(
        from source: OpaquePointer?, to target: inout OpaquePointer?,
        dropping drop: (String) -> Bool
    ) {
        var entry: UnsafeMutablePointer<AVDictionaryEntry>? = nil
        while let e = av_dict_get(source, "", entry, AV_DICT_IGNORE_SUFFIX) {
            entry = e
            if !drop(String(cString: e.pointee.key)) { av_dict_set(&target, e.pointee.key, e.pointee.value, 0) }
        }
    }

    /// Adds a stream that receives the input stream's packets unchanged (stream copy).
    package func addCopiedStream(from input: StreamRef, sameContainerFamily: Bool)
        throws(CropZoomError) -> Int
    {
        let st = try output.addStream()
        try check(
            avcodec_parameters_copy(st.pointer.pointee.codecpar, input.pointer.pointee.codecpar),
            "copying stream parameters",
            path: output.displayPath)
        let par = st.pointer.pointee.codecpar!
        if !sameContainerFamily || !output.acceptsTag(par.pointee.codec_tag, for: par.pointee.codec_id) {
            par.pointee.codec_tag = 0
        }
        st.pointer.pointee.time_base = input.pointer.pointee.time_base
        st.pointer.pointee.disposition = input.pointer.pointee.disposition
        av_dict_copy(&st.pointer.pointee.metadata, input.pointer.pointee.metadata, 0)
        track(input.timeBase)
        return Int(st.pointer.pointee.index)
    }

    /// Adds a stream that receives the input's text subtitles converted to `target` (`SubtitleConverter`,
    /// the stream's parameters from its encoder), its times, disposition and tags as a copy's.
    package func addConvertedSubtitle(from input: StreamRef, target: AVCodecID) throws(CropZoomError) -> Int {
        let converter = try SubtitleConverter(input: input, target: target, path: output.displayPath)
        let st = try output.addStream()
        try check(
            avcodec_parameters_from_context(st.pointer.pointee.codecpar, converter.encoder.pointer),
            "configuring an output stream", path: output.displayPath)
        st.pointer.pointee.time_base = input.pointer.pointee.time_base
        st.pointer.pointee.disposition = input.pointer.pointee.disposition
        av_dict_copy(&st.pointer.pointee.metadata, input.pointer.pointee.metadata, 0)
        track(input.timeBase)
        let index = Int(st.pointer.pointee.index)
        subtitleConverters[index] = converter
        return index
    }

    /// Adds the input's cover picture (`AVStream.attached_pic`) as a Matroska attachment: its bytes as the
    /// stream's extradata, named `cover.png`/`cover.jpg` with its MIME type (what players and FFmpeg's own
    /// demuxer read as cover art). False when the input holds no picture bytes or its format is not PNG or JPEG.
    package func addCoverAttachment(from input: StreamRef) throws(CropZoomError) -> Bool {
        let pic = input.pointer.pointee.attached_pic
        let (name, mime): (String, String)
        switch input.codecID.av {
        case AV_CODEC_ID_PNG: (name, mime) = ("cover.png", "image/png")
        case AV_CODEC_ID_MJPEG: (name, mime) = ("cover.jpg", "image/jpeg")
        default: return false
        }
        guard pic.size > 0, let data = pic.data else { return false }
        let st = try output.addStream()
        let par = st.pointer.pointee.codecpar!
        par.pointee.codec_type = AVMEDIA_TYPE_ATTACHMENT
        par.pointee.codec_id = AV_CODEC_ID_NONE
        guard let copy = av_mallocz(Int(pic.size) + Int(AV_INPUT_BUFFER_PADDING_SIZE)) else {
            throw CropZoomError(.processing, what: "copying the cover picture", reason: "out of memory")
        }
        copy.copyMemory(from: data, byteCount: Int(pic.size))
        par.pointee.extradata = copy.assumingMemoryBound(to: UInt8.self)
        par.pointee.extradata_size = pic.size
        av_dict_set(&st.pointer.pointee.metadata, "filename", name, 0)
        av_dict_set(&st.pointer.pointee.metadata, "mimetype", mime, 0)
        track(input.timeBase)
        return true
    }

    /// The converters of converted subtitle streams, by output stream.
    private var subtitleConverters: [Int: SubtitleConverter] = [:]

    /// Subtitle packets left out because their text could not be converted.
    package var subtitleFailures: Int { subtitleConverters.values.reduce(0) { $0 + $1.failures } }

    /// Keeps the input's display matrix on the output video stream (`--orientation ignore`;
    /// `av_stream_new_side_data`). False when the input has a matrix that turns or mirrors the
    /// picture and `container` cannot store it: in FFmpeg 5.1 only the MP4/MOV muxers write it (the
    /// Matroska muxer has no display matrix).
    package func copyDisplayMatrix(from input: StreamRef, to index: Int, container: String) -> Bool {
        var size: Int = 0
        guard let data = av_stream_get_side_data(input.pointer, AV_PKT_DATA_DISPLAYMATRIX, &size), size >= 36 else {
            return true
        }
        if let dst = av_stream_new_side_data(output.stream(index).pointer, AV_PKT_DATA_DISPLAYMATRIX, size) {
            dst.update(from: data, count: size)
        }
        let stores = ["mp4", "mov", "ipod", "3gp", "3g2", "psp", "ismv", "f4v"].contains(container)
        return stores || input.displayOrientation.isIdentity
    }

    /// Removes an HTC rotation track name (`htc_video_rotA-NNN`, see `Orientation.display(of:)`)
    /// from an output stream whose pixels are already upright (`av_dict_set` with no value).
    package func dropHTCRotation(_ index: Int) {
        let st = output.stream(index)
        guard let title = av_dict_get(st.pointer.pointee.metadata, "title", nil, 0),
            String(cString: title.pointee.value).hasPrefix("htc_video_rotA-")
        else { return }
        av_dict_set(&st.pointer.pointee.metadata, "title", nil, 0)
    }

    /// The MP4/MOV movie time scale: edit lists (start offsets, priming) are written in it, and
    /// the default of 1000 rounds a start of 66.733 ms down to 66 ms. The least common multiple
    /// of the streams' time-base denominators represents every stream's start exactly.
    package func movieTimescale() -> Int64 { Muxer.movieTimescale(sourceTimeBase) }

    /// The least common multiple of `bases`' denominators (at least 1000; 1000 when it overflows).
    package static func movieTimescale(_ bases: [TimeBase]) -> Int64 {
        var l: Int64 = 1
        for tb in bases {
            let d = Int64(max(1, tb.den))
            let g = gcd(l, d)
            let next = l / g * d
            if next > Int64(Int32.max) { return max(l, 1000) }
            l = next
        }
        return max(l, 1000)
    }

    private static func gcd(_ a: Int64, _ b: Int64) -> Int64 { b == 0 ? a : gcd(b, a % b) }

    /// HEVC in MP4/MOV as `hvc1` (its parameter sets in the sample description only), which QuickTime, Safari and
    /// iOS play, instead of FFmpeg's default `hev1`, which they refuse.
    private func tagHEVCForApple() {
        let hev1 = Muxer.fourCC("hev1")
        for i in 0..<output.streamCount where i != videoTag?.stream {
            let par = output.stream(i).parameters
            if par.pointee.codec_id == AV_CODEC_ID_HEVC && (par.pointee.codec_tag == 0 || par.pointee.codec_tag == hev1)
            {
                par.pointee.codec_tag = Muxer.fourCC("hvc1")
            }
        }
    }

    /// A four-character code as FFmpeg stores it (`MKTAG`).
    package static func fourCC(_ s: String) -> UInt32 {
        s.utf8.prefix(4).enumerated().reduce(0) { $0 | UInt32($1.element) << (8 * UInt32($1.offset)) }
    }

    /// Gives each AAC stream without its configuration an `aac_adtstoasc` filter.
    private func filterADTS() throws(CropZoomError) {
        adtsFilters = try (0..<output.streamCount).map { (i: Int) throws(CropZoomError) -> BitstreamFilter? in
            let st = output.stream(i)
            guard st.codecID == .aac && st.extradataSize == 0 else { return nil }
            return try BitstreamFilter(name: "aac_adtstoasc", parameters: st.parameters, timeBase: st.timeBase)
        }
    }

    /// A null run with nothing to mux (`--null --codec none` on a clip without audio): there is
    /// nothing to write, and `avformat_write_header` refuses an output without streams.
    private var idle: Bool { output.formatName == "null" && output.streamCount == 0 }

    /// A live recording: the file must stay playable while it grows, so that a crash leaves what was recorded up
    /// to the last second or two.
    package let live: Bool

    /// Per output stream: the `aac_adtstoasc` filter of ADTS AAC going into a fragmented MP4/MOV (FFmpeg 5.1's
    /// muxer inserts it by itself only for a regular one), else nil.
    private var adtsFilters: [BitstreamFilter?] = []

    /// `--tag`: the encoded video stream and the four-character code it gets.
    package var videoTag: (stream: Int, tag: String)?

    /// Written as a fragmented MP4/MOV file (a live recording's; not a pipe's): ``FinishedMP4`` makes it regular
    /// at a normal end.
    package private(set) var fragmentedFile = false

    /// `--segment`: the segments' container and length (the output is FFmpeg's segment muxer).
    package let segment: (format: String, seconds: Double)?
    /// HLS: its files' length (`hls_time`, a keyframe forced at each cut).
    package let hlsTime: Double?

    /// A phone's tags — Apple's `com.apple.quicktime.make`, `model`, `software`, `creationdate`,
    /// `location.ISO6709`, Android's `com.android.version`, `com.android.capture.fps` (slow motion) — are kept by
    /// MP4/MOV only as QuickTime metadata keys (`mdta`, `movflags=+use_metadata_tags`): true when `output` has
    /// such a tag (a key with a dot), whose other tags then go there too.
    package static func keepVendorMetadata(_ output: OutputFormat) -> Bool {
        for key in inputContainerTags { output.removeMetadata(key) }
        return output.metadataKeys.contains { $0.contains(".") }
    }

    /// The tags that describe the input's own container, not copied: an MP4/MOV muxer writes its own (and would
    /// write these as keys), Matroska would keep another file's brands.
    package static let inputContainerTags = ["major_brand", "minor_version", "compatible_brands"]

    package func writeHeader() throws(CropZoomError) {
        if idle { return }
        var options: [String: String] = [:]
        let name = segment?.format ?? output.formatName
        if ["mp4", "mov", "ipod", "3gp", "3g2", "psp", "ismv", "f4v"].contains(name) {
            // A pipe cannot be rewound to write the index at the front (or at all, after the
            // data): fragmented MP4, whose every fragment carries its own index, instead. So is a
            // live recording, with a fragment at least every half second: a file cut anywhere plays up to
            // its last complete fragment.
            // ADTS AAC (an MPEG-TS's) has no configuration before its first packet: a fragmented MP4 takes it
            // through `aac_adtstoasc`, which strips the headers and hands the configuration on with the first.
            // `delay_moov`: the header (moov) waits for the first fragment, so it can hold each track's start —
            // without it FFmpeg 5.1 moves a track whose first time is not 0 to 0 (the video's B-frame delay: the
            // picture shown 2 frames late against the sound, and a gap after an AAC track's first packet).
            let fragmented = output.streaming || live
            if fragmented { try filterADTS() }
            options["movflags"] =
                fragmented ? "+frag_keyframe+empty_moov+delay_moov+default_base_moof" : "+faststart"
            if live && fragmented { options["frag_duration"] = "500000" }
            fragmentedFile = fragmented && !output.streaming && segment == nil
            options["movie_timescale"] = String(movieTimescale())
            tagHEVCForApple()
            if Muxer.keepVendorMetadata(output) { options["movflags"]! += "+use_metadata_tags" }
        }
        if live {
            // Every packet reaches the file when the muxer writes it (not when a 32 KiB buffer fills).
            options["flush_packets"] = "1"
            if name == "matroska" || name == "webm" { options["cluster_time_limit"] = "500" }
        }
        if name == "mpegts" { options["mpegts_copyts"] = "1" }
        if let hlsTime {
            options["hls_time"] = String(format: "%.6f", hlsTime)
            // A live recording's playlist lists every file, growing (EVENT): a player can start anywhere.
            if live { options["hls_playlist_type"] = "event" }
        }
        // Matroska stores negative timestamps relative to the first cluster; the default
        // shift to non-negative would move the streams against each other (see addCopiedStream).
        if name == "matroska" || name == "webm" { options["avoid_negative_ts"] = "disabled" }
        if let segment {
            // Each file starts at a keyframe (the encoder forces one at every boundary) with its times from 0;
            // its own container's options go to each file.
            let inner = options.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ":")
            options = [
                "segment_format": segment.format, "segment_time": String(format: "%.6f", segment.seconds),
                "reset_timestamps": "1", "segment_format_options": inner,
                // Every file's times as the later ones': from its first frame at 0, what comes before it (a
                // B-frame's decode time, sound captured just before) negative; not the first file's alone shifted.
                "avoid_negative_ts": "disabled",
            ]
            if live { options["flush_packets"] = "1" }
        }
        if let videoTag {
            output.stream(videoTag.stream).parameters.pointee.codec_tag = Muxer.fourCC(videoTag.tag)
        }
        do { try output.writeHeader(options: options) } catch
            where videoTag != nil && (error.code == AVCode.invalidArgument || error.code == AVCode.invalidData)
        {
            let codec = output.stream(videoTag!.stream).codecName
            throw CropZoomError(
                .usage, path: output.displayPath, setting: .tag,
                reason: "\(setting: .tag) \(videoTag!.tag): the \(name) container does not take it for \(codec)")
        }
    }

    /// The time base of output stream `stream` (the container's choice, final once the header
    /// is written).
    package func timeBase(of stream: Int) -> TimeBase { output.stream(stream).timeBase }
    /// Whether the muxer takes a packet at the same decode time as the one before it in its stream
    /// (`AVFMT_TS_NONSTRICT`: Matroska, WebM, FLV); others want each later than the last.
    package var takesEqualTimes: Bool { output.outputFormat.pointee.flags & AVFMT_TS_NONSTRICT != 0 }
    /// Whether output stream `stream` is audio.
    package func isAudio(_ stream: Int) -> Bool {
        output.stream(stream).parameters.pointee.codec_type == AVMEDIA_TYPE_AUDIO
    }

    /// Writes `packet`, its times already in the container's time base (`TimestampPolicy.toContainer`),
    /// and takes its payload (`av_interleaved_write_frame`). `sourcePTS` is its pts before, to
    /// count the times the container could not hold apart.
    package func write(_ packet: Packet, stream: Int, sourcePTS source: Int64) throws(CropZoomError) {
        if stream < adtsFilters.count, let filter = adtsFilters[stream], try !filter.filter(packet) { return }
        if let converter = subtitleConverters[stream], !converter.convert(packet) { return }
        packet.pointer.pointee.stream_index = Int32(stream)
        packet.pointer.pointee.pos = -1
        if source != AVCode.noPTS {
            if recentPTS[stream].contains(where: { $0.written == packet.pts && $0.source != source }) {
                mergedTimes[stream] += 1
            }
            recentPTS[stream][packetsWritten[stream] % Muxer.recentCount] = (source, packet.pts)
        }
        packetsWritten[stream] += 1
        try output.write(packet)
    }

    /// One line per stream whose times the container could not hold apart, else nothing.
    package func timePrecisionNotices() -> [String] {
        mergedTimes.indices.filter { mergedTimes[$0] > 0 }.map { i in
            let tb = output.stream(i).timeBase
            let step = tb.den > 0 ? String(format: "%g ms", 1000 * tb.seconds) : "its"
            return
                "output stream #\(i): \(mergedTimes[i]) packets share a timestamp with another: \(output.formatName) "
                + "stores times in \(step) steps, coarser than the input's (use .mp4, .mov or .ts to keep them apart)"
        }
    }

    package func finish() throws(CropZoomError) {
        if idle { return }
        try output.finish()
    }
}
