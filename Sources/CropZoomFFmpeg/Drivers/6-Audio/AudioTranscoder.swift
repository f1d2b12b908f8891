import CFFmpeg
import CropZoomCore

/// Re-encodes one audio stream (only where the output container cannot carry its codec, or
/// when `--audio aac` asks): decode → resample (`swr_convert_frame`) → re-chunk → encode.
/// Presentation times follow the decoded samples, so the stream starts where it started.
package final class AudioTranscoder: @unchecked Sendable {
    // @unchecked Sendable: owned and driven by one thread.
    package let inputIndex: Int
    package let decoder: CodecContext
    package let encoder: CodecContext
    private let resampler: Resampler
    let fifo: AudioFIFO
    private let decoded: Frame
    private let converted: Frame
    private let chunk: Frame
    private let packet: Packet
    /// Next output sample's pts in 1/sample_rate, set from the first decoded frame.
    private var nextPTS: Int64?
    package private(set) var corruptPackets = 0

    /// What the encoder is asked for beyond its codec (`--audio-bitrate`, `--audio-channels`); nil: chosen here.
    package struct Request {
        package var bitRate: Int? = nil
        package var channels: TranscodeConfiguration.AudioChannels? = nil

        package init(
            bitRate: Int? = nil, channels: TranscodeConfiguration.AudioChannels? = nil
        ) {
            self.bitRate = bitRate
            self.channels = channels
        }
    }

    /// The channel layouts when the encoder's differs from the input's (named by `av_channel_layout_describe`):
    /// a mix-down, a mix-up or a move of channels that a note should tell.
    package private(set) var layoutChange: (from: String, to: String)?
    /// `--audio-bitrate` was given to a lossless encoder, which has no bit rate to set.
    package private(set) var bitRateIgnored = false

    /// `strict` (`--strict`): a packet the decoder refuses, or a decoded frame the resampler cannot take, is an
    /// error instead of being counted (and, for the frame, written as silence).
    package let strict: Bool

    /// `sampleRate`: the rate the container requires (MXF: 48 kHz), else the input's when the
    /// encoder takes it.
    package init(
        input: InputFormat, streamIndex: Int, encoderName: String, globalHeader: Bool,
        sampleRate: Int32? = nil, request: Request = Request(), strict: Bool = false
    ) throws(CropZoomError) {
        self.strict = strict
        let st = input.stream(streamIndex)
        let par = st.parameters
        guard let dcodec = avcodec_find_decoder(par.pointee.codec_id) else {
            let name = String(cString: avcodec_get_name(par.pointee.codec_id))
            throw CropZoomError(
                .processing, path: input.path, setting: .audio,
                reason: "no decoder for the audio codec '\(name)' (use \(setting: .audio) none)")
        }
        decoder = try CodecContext(codec: dcodec, path: input.path)
        try check(avcodec_parameters_to_context(decoder.pointer, par), "configuring an audio decoder", path: input.path)
        decoder.pointer.pointee.pkt_timebase = st.timeBase.rational
        try decoder.open(kind: .processing, what: "opening the \(decoder.name) decoder")

        guard let ecodec = avcodec_find_encoder_by_name(encoderName) else {
            throw CropZoomError(.processing, reason: "the \(encoderName) audio encoder is missing from this FFmpeg")
        }
        encoder = try CodecContext(codec: ecodec, path: input.path)
        let e = encoder.pointer
        let rates = ecodec.supportedSampleRates
        var rate = decoder.pointer.pointee.sample_rate
        if !rates.isEmpty && !rates.contains(rate) {
            rate = rates.min(by: { abs($0 - rate) < abs($1 - rate) }) ?? 48000
            if rates.contains(48000) && rate != decoder.pointer.pointee.sample_rate { rate = 48000 }
        }
        if let sampleRate { rate = sampleRate }
        e.pointee.sample_rate = rate
        let formats = ecodec.supportedSampleFormats
        e.pointee.sample_fmt =
            formats.contains(decoder.pointer.pointee.sample_fmt)
            ? decoder.pointer.pointee.sample_fmt : (formats.first ?? AV_SAMPLE_FMT_FLTP)
        var inputLayout = AVChannelLayout()
        try check(av_channel_layout_copy(&inputLayout, &decoder.pointer.pointee.ch_layout), "copying a channel layout")
        defer { av_channel_layout_uninit(&inputLayout) }
        Resampler.name(&inputLayout)
        var layout = AVChannelLayout()
        defer { av_channel_layout_uninit(&layout) }
        var options: [String: String] = [:]
        try Self.chooseLayout(
            &layout, input: &inputLayout, asked: request.channels, encoder: ecodec, options: &options)
        // An asked-for layout the encoder will not open with (the AAC encoder and 9 channels, libopus and 2.1) is a
        // usage error listing the layouts it takes, found before the output is opened, not "Invalid argument".
        if let asked = request.channels,
            !Self.opens(ecodec, layout: &layout, rate: rate, format: e.pointee.sample_fmt, options: options)
        {
            let takes = Self.standardLayouts.filter { name in
                var candidate = AVChannelLayout()
                defer { av_channel_layout_uninit(&candidate) }
                guard av_channel_layout_from_string(&candidate, name) >= 0 else { return false }
                var o = options
                Self.setMappingFamily(&o, encoder: encoderName, channels: candidate.nb_channels)
                return Self.opens(ecodec, layout: &candidate, rate: rate, format: e.pointee.sample_fmt, options: o)
            }
            let given: String
            switch asked {
            case .count(let n): given = "\(n)"
            case .layout(let name): given = name
            }
            throw CropZoomError(
                .usage, setting: .audioChannels,
                reason:
                    "\(setting: .audioChannels) \(given): the \(encoderName) encoder does not take \(Self.describe(&layout))"
                    + (takes.isEmpty ? "" : "; it takes \(takes.joined(separator: ", "))"))
        }
        if av_channel_layout_compare(&layout, &inputLayout) != 0 {
            layoutChange = (Self.describe(&inputLayout), Self.describe(&layout))
        }
        try check(av_channel_layout_copy(&e.pointee.ch_layout, &layout), "setting the channel layout")
        e.pointee.time_base = AVRational(num: 1, den: rate)
        let n = Int(layout.nb_channels)
        e.pointee.bit_rate = Int64(request.bitRate ?? (n <= 2 ? 128_000 * max(1, n) / 2 : 64_000 * n))
        if request.bitRate != nil, let d = avcodec_descriptor_get(ecodec.pointee.id),
            d.pointee.props & AV_CODEC_PROP_LOSSLESS != 0
        {
            bitRateIgnored = true
        }
        // FFmpeg's own Opus and Vorbis encoders are experimental: taken only when asked for by name.
        if ecodec.pointee.capabilities & AV_CODEC_CAP_EXPERIMENTAL != 0 { e.pointee.strict_std_compliance = -2 }
        if globalHeader { e.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER }
        try encoder.open(options: options, kind: .processing, what: "opening the \(encoderName) encoder")

        resampler = try Resampler(from: decoder.pointer, to: e)
        fifo = try AudioFIFO(format: e.pointee.sample_fmt, channels: e.pointee.ch_layout.nb_channels)
        decoded = try Frame()
        converted = try Frame()
        chunk = try Frame()
        packet = try Packet()
        inputIndex = streamIndex
    }

    /// The encoder's layout: `asked` (a count's default layout, `av_channel_layout_default`, or a name,
    /// `av_channel_layout_from_string`), else the input's; then, where the encoder lists the layouts it takes
    /// (`AVCodec.ch_layouts`), the listed one of the same count, else stereo. libopus above two channels is mapping
    /// family 1 (up to 8 channels, Vorbis order; its 5.1 is 5.1(back), side channels moved to the back).
    private static func chooseLayout(
        _ layout: inout AVChannelLayout, input: inout AVChannelLayout, asked: TranscodeConfiguration.AudioChannels?,
        encoder: UnsafePointer<AVCodec>, options: inout [String: String]
    ) throws(CropZoomError) {
        switch asked {
        case .count(let n)?:
            av_channel_layout_default(&layout, Int32(n))
        case .layout(let name)?:
            guard av_channel_layout_from_string(&layout, name) >= 0, layout.nb_channels > 0 else {
                throw CropZoomError(
                    .usage, setting: .audioChannels,
                    reason: "\(setting: .audioChannels) \(name): not a channel layout FFmpeg knows "
                        + "(mono, stereo, 2.1, quad, 5.0, 5.1, 7.1 …)")
            }
        case nil:
            try check(av_channel_layout_copy(&layout, &input), "copying a channel layout")
        }
        let name = String(cString: encoder.pointee.name)
        if name == "libopus" && layout.nb_channels > 8 {
            guard asked == nil else {
                throw CropZoomError(
                    .usage, setting: .audioChannels,
                    reason: "\(setting: .audioChannels): libopus takes at most 8 channels (got \(layout.nb_channels))")
            }
            av_channel_layout_uninit(&layout)
            av_channel_layout_default(&layout, 2)
        }
        Self.setMappingFamily(&options, encoder: name, channels: layout.nb_channels)
        let listed = encoder.supportedChannelLayouts
        guard !listed.isEmpty,
            !listed.contains(where: { l in
                var l = l
                return av_channel_layout_compare(&l, &layout) == 0
            })
        else { return }
        if var same = listed.first(where: { $0.nb_channels == layout.nb_channels }) {
            av_channel_layout_uninit(&layout)
            try check(av_channel_layout_copy(&layout, &same), "setting the channel layout")
            return
        }
        if asked != nil {
            let counts = Set(listed.map { Int($0.nb_channels) }).sorted().map(String.init).joined(separator: ", ")
            throw CropZoomError(
                .usage, setting: .audioChannels,
                reason: "\(setting: .audioChannels): \(name) takes \(counts) channels, not \(layout.nb_channels)")
        }
        av_channel_layout_uninit(&layout)
        av_channel_layout_default(&layout, 2)
    }

    /// libopus above two channels is mapping family 1 (up to 8 channels, Vorbis order); two or fewer, its default.
    package static func setMappingFamily(_ options: inout [String: String], encoder: String, channels: Int32) {
        guard encoder == "libopus" else { return }
        options["mapping_family"] = channels > 2 ? "1" : nil
    }

    /// The layouts a refusal lists when the encoder takes them.
    package static let standardLayouts = ["mono", "stereo", "2.1", "3.0", "quad", "5.0", "5.1", "6.1", "7.1"]

    /// Whether `codec` opens for `layout` at `rate` and `format` with `options` (a throwaway context:
    /// `avcodec_alloc_context3`, `avcodec_open2`, `avcodec_free_context`).
    package static func opens(
        _ codec: UnsafePointer<AVCodec>, layout: inout AVChannelLayout, rate: Int32, format: AVSampleFormat,
        options: [String: String]
    ) -> Bool {
        var c = avcodec_alloc_context3(codec)
        guard let ctx = c else { return true }
        defer { avcodec_free_context(&c) }
        ctx.pointee.sample_rate = rate
        ctx.pointee.sample_fmt = format
        ctx.pointee.time_base = AVRational(num: 1, den: rate)
        guard av_channel_layout_copy(&ctx.pointee.ch_layout, &layout) >= 0 else { return true }
        ctx.pointee.bit_rate = Int64(64_000 * max(1, Int(layout.nb_channels)))
        if codec.pointee.capabilities & AV_CODEC_CAP_EXPERIMENTAL != 0 { ctx.pointee.strict_std_compliance = -2 }
        var dict: OpaquePointer? = nil
        defer { av_dict_free(&dict) }
        for (k, v) in options { av_dict_set(&dict, k, v, 0) }
        return avcodec_open2(ctx, codec, &dict) >= 0
    }

    /// `av_channel_layout_describe`: "stereo", "5.1(side)", "3 channels".
    static func describe(_ layout: inout AVChannelLayout) -> String {
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = buffer.withUnsafeMutableBufferPointer { b in
            b.withMemoryRebound(to: CChar.self) { av_channel_layout_describe(&layout, $0.baseAddress, 64) }
        }
        guard n >= 0 else { return "\(layout.nb_channels) channels" }
        return String(decoding: buffer.prefix { $0 != 0 }, as: UTF8.self)
    }

    /// Codec names and the encoders that make them, best first (`--audio-codec`).
    package static let preferredEncoders: [String: [String]] = [
        "aac": ["aac", "libfdk_aac"], "opus": ["libopus", "opus"], "mp3": ["libmp3lame", "libshine"],
        "vorbis": ["libvorbis", "vorbis"], "mp2": ["mp2", "libtwolame"], "pcm": ["pcm_s16le"],
    ]

    /// The audio encoder `given` names (`avcodec_find_encoder_by_name`), or the best installed one for the codec it
    /// names (`preferredEncoders`, then `avcodec_descriptor_get_by_name` and `avcodec_find_encoder`); a name this
    /// FFmpeg does not know, or a codec it cannot encode, is a usage error naming `--audio-codec`.
    static func encoder(named given: String) throws(CropZoomError) -> UnsafePointer<AVCodec> {
        let name = given.lowercased()
        for n in preferredEncoders[name == "mpeg3" ? "mp3" : name] ?? [] {
            if let c = avcodec_find_encoder_by_name(n) { return c }
        }
        if let c = avcodec_find_encoder_by_name(name), c.pointee.type == AVMEDIA_TYPE_AUDIO { return c }
        guard let d = avcodec_descriptor_get_by_name(name), d.pointee.type == AVMEDIA_TYPE_AUDIO else {
            throw CropZoomError(
                .usage, setting: .audioCodec,
                reason: "\(setting: .audioCodec) \(given): no such audio codec or encoder "
                    + "(aac, opus, mp3, vorbis, flac, alac, ac3, eac3, pcm_s16le …; see `ffmpeg -encoders`)")
        }
        guard let c = avcodec_find_encoder(d.pointee.id) else {
            throw CropZoomError(
                .usage, setting: .audioCodec,
                reason: "\(setting: .audioCodec) \(given): this FFmpeg has no \(String(cString: d.pointee.name)) "
                    + "encoder (try `ffmpeg -encoders`)")
        }
        return c
    }

    var timeBase: AVRational { encoder.pointer.pointee.time_base }

    /// The encoder for audio `container` cannot hold as it is: AAC where the container holds AAC,
    /// else the container's own audio codec (Opus for WebM, MP2 for MPEG-PS …; `avcodec_find_encoder`);
    /// nil when the container holds no audio (GIF, images) or that codec has no encoder here.
    package static func encoderName(for container: OutputFormat) -> String? {
        if container.canStore(AV_CODEC_ID_AAC) { return "aac" }
        let id = container.defaultCodec(AVMEDIA_TYPE_AUDIO)
        if id == AV_CODEC_ID_OPUS, avcodec_find_encoder_by_name("libopus") != nil { return "libopus" }
        guard id != AV_CODEC_ID_NONE, let codec = avcodec_find_encoder(id) else { return nil }
        return String(cString: codec.pointee.name)
    }

    /// Feeds one packet (nil = end) and hands every encoded packet to `body`.
    package func transcode(_ input: Packet?, _ body: (Packet) throws(CropZoomError) -> Void) throws(CropZoomError) {
        do { _ = try decoder.send(packet: input) } catch {
            try damaged(refusal(error))
        }
        while true {
            let step: AVStep<Void>
            do { step = try decoder.receive(frame: decoded) } catch {
                try damaged(refusal(error))
                continue
            }
            guard case .value = step else { break }
            defer { decoded.unref() }
            if nextPTS == nil {
                let t = decoded.presentationTime
                nextPTS = t == AVCode.noPTS ? 0 : av_rescale_q(t, decoder.pointer.pointee.pkt_timebase, timeBase)
            }
            try resample(decoded)
            try drainFIFO(final: false, body)
        }
        if input == nil {
            try resample(nil)
            try drainFIFO(final: true, body)
            try encode(nil, body)
        }
    }

    /// One decoded frame (nil: the end) converted into the FIFO; a frame swresample refuses stands as silence of
    /// its length (``corruptPackets`` counts it).
    func resample(_ frame: Frame?) throws(CropZoomError) {
        let e = encoder.pointer
        converted.unref()
        converted.pointer.pointee.sample_rate = e.pointee.sample_rate
        converted.pointer.pointee.format = e.pointee.sample_fmt.rawValue
        try check(
            av_channel_layout_copy(&converted.pointer.pointee.ch_layout, &e.pointee.ch_layout),
            "setting the channel layout")
        if let frame {
            do throws(CropZoomError) {
                try resampler.adapt(to: frame, output: converted)
            } catch {
                // Damaged sound can decode to a frame of a layout no resampler takes (a program config element of
                // 47 channels read from garbage): the frame is damaged, counted as a packet that does not decode
                // is, and stands as silence of its length, so the sound after it stays in step with the pictures.
                try damaged(
                    CropZoomError(
                        .processing, what: "converting its audio (\(setting: .strict))", path: decoder.path,
                        setting: .strict,
                        reason: "a decoded audio frame of \(Self.describe(&frame.pointer.pointee.ch_layout)) that "
                            + "cannot be converted (damaged sound): \(error.reason)"))
                try writeSilence(for: frame)
                return
            }
        }
        try check(swr_convert_frame(resampler.pointer, converted.pointer, frame?.pointer), "resampling audio")
        try bufferConverted()
    }

    /// `converted`'s samples into the FIFO (`av_audio_fifo_write`).
    private func bufferConverted() throws(CropZoomError) {
        let n = converted.samples
        guard n > 0 else { return }
        let written = withUnsafeMutablePointer(to: &converted.pointer.pointee.data) { t in
            t.withMemoryRebound(to: UnsafeMutableRawPointer?.self, capacity: 8) { data in
                av_audio_fifo_write(fifo.pointer, data, Int32(n))
            }
        }
        try check(written, "buffering audio")
    }

    /// Counts damaged sound (a packet the decoder refused, a frame the resampler cannot take); with ``strict``,
    /// throws `error` instead (made only then).
    private func damaged(_ error: @autoclosure () -> CropZoomError) throws(CropZoomError) {
        guard strict else {
            corruptPackets += 1
            return
        }
        throw error()
    }

    /// What `--strict` says of a packet the decoder refused with `error`.
    private func refusal(_ error: CropZoomError) -> CropZoomError {
        CropZoomError.ffmpeg(
            error.code ?? AVCode.invalidData, .processing,
            what: "decoding a damaged audio packet (\(setting: .strict))", path: decoder.path)
    }

    /// As many samples of silence as `frame` (a damaged frame that cannot be converted) lasts, at the encoder's
    /// rate, into the FIFO (`av_samples_set_silence`).
    private func writeSilence(for frame: Frame) throws(CropZoomError) {
        let e = encoder.pointer
        let outRate = Int64(e.pointee.sample_rate)
        let rate = frame.pointer.pointee.sample_rate > 0 ? Int64(frame.pointer.pointee.sample_rate) : outRate
        let count = av_rescale(Int64(frame.samples), outRate, rate)
        guard count > 0, count <= 1 << 20 else { return }
        converted.pointer.pointee.nb_samples = Int32(count)
        try check(av_frame_get_buffer(converted.pointer, 0), "allocating audio")
        _ = withUnsafeMutablePointer(to: &converted.pointer.pointee.data) { t in
            t.withMemoryRebound(to: UnsafeMutablePointer<UInt8>?.self, capacity: 8) { data in
                av_samples_set_silence(data, 0, Int32(count), e.pointee.ch_layout.nb_channels, e.pointee.sample_fmt)
            }
        }
        try bufferConverted()
    }

    private func drainFIFO(final: Bool, _ body: (Packet) throws(CropZoomError) -> Void) throws(CropZoomError) {
        let e = encoder.pointer
        let size = e.pointee.frame_size > 0 ? Int(e.pointee.frame_size) : 1024
        while fifo.count >= size || (final && fifo.count > 0) {
            let n = min(size, fifo.count)
            chunk.unref()
            chunk.pointer.pointee.nb_samples = Int32(n)
            chunk.pointer.pointee.format = e.pointee.sample_fmt.rawValue
            chunk.pointer.pointee.sample_rate = e.pointee.sample_rate
            try check(
                av_channel_layout_copy(&chunk.pointer.pointee.ch_layout, &e.pointee.ch_layout),
                "setting the channel layout")
            try check(av_frame_get_buffer(chunk.pointer, 0), "allocating audio")
            _ = withUnsafeMutablePointer(to: &chunk.pointer.pointee.data) { t in
                t.withMemoryRebound(to: UnsafeMutableRawPointer?.self, capacity: 8) { data in
                    av_audio_fifo_read(fifo.pointer, data, Int32(n))
                }
            }
            chunk.pts = nextPTS ?? 0
            nextPTS = (nextPTS ?? 0) + Int64(n)
            try encode(chunk, body)
        }
    }

    private func encode(_ frame: Frame?, _ body: (Packet) throws(CropZoomError) -> Void) throws(CropZoomError) {
        try encoder.encode(frame, into: packet, body)
    }
}
