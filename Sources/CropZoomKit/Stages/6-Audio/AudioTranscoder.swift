import CFFmpeg

/// Re-encodes one audio stream (only where the output container cannot carry its codec, or
/// when `--audio aac` asks): decode → resample (`swr_convert_frame`) → re-chunk → encode.
/// Presentation times follow the decoded samples, so the stream starts where it started.
final class AudioTranscoder: @unchecked Sendable {
    // @unchecked Sendable: owned and driven by one thread.
    let inputIndex: Int
    let decoder: CodecContext
    let encoder: CodecContext
    private let resampler: Resampler
    private let fifo: AudioFIFO
    private let decoded: Frame
    private let converted: Frame
    private let chunk: Frame
    private let packet: Packet
    /// Next output sample's pts in 1/sample_rate, set from the first decoded frame.
    private var nextPTS: Int64?
    private(set) var corruptPackets = 0

    /// `sampleRate`: the rate the container requires (MXF: 48 kHz), else the input's when the
    /// encoder takes it.
    init(
        input: InputFormat, streamIndex: Int, encoderName: String, globalHeader: Bool,
        sampleRate: Int32? = nil
    ) throws(CropZoomError) {
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
        var layout = decoder.pointer.pointee.ch_layout
        if layout.order == AV_CHANNEL_ORDER_UNSPEC { av_channel_layout_default(&layout, layout.nb_channels) }
        var options: [String: String] = [:]
        if encoderName == "libopus" && layout.nb_channels > 2 {
            if layout.nb_channels <= 8 {
                // Surround Opus is mapping family 1 (Vorbis channel order, up to 8 channels; libopus
                // reorders): the layout libopus lists for that count (5.1 is 5.1(back): side
                // channels are resampled to the back).
                let listed = ecodec.supportedChannelLayouts.first { $0.nb_channels == layout.nb_channels }
                if var listed { try check(av_channel_layout_copy(&layout, &listed), "setting the channel layout") }
                options["mapping_family"] = "1"
            } else {
                av_channel_layout_default(&layout, 2)
            }
        }
        try check(av_channel_layout_copy(&e.pointee.ch_layout, &layout), "setting the channel layout")
        e.pointee.time_base = AVRational(num: 1, den: rate)
        e.pointee.bit_rate = Int64(
            layout.nb_channels <= 2 ? 128_000 * max(1, Int(layout.nb_channels)) / 2 : 64_000 * Int(layout.nb_channels))
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

    var timeBase: AVRational { encoder.pointer.pointee.time_base }

    /// The encoder for audio `container` cannot hold as it is: AAC where the container holds AAC,
    /// else the container's own audio codec (Opus for WebM, MP2 for MPEG-PS …; `avcodec_find_encoder`);
    /// nil when the container holds no audio (GIF, images) or that codec has no encoder here.
    static func encoderName(for container: OutputFormat) -> String? {
        if container.canStore(AV_CODEC_ID_AAC) { return "aac" }
        let id = container.defaultCodec(AVMEDIA_TYPE_AUDIO)
        if id == AV_CODEC_ID_OPUS, avcodec_find_encoder_by_name("libopus") != nil { return "libopus" }
        guard id != AV_CODEC_ID_NONE, let codec = avcodec_find_encoder(id) else { return nil }
        return String(cString: codec.pointee.name)
    }

    /// Feeds one packet (nil = end) and hands every encoded packet to `body`.
    func transcode(_ input: Packet?, _ body: (Packet) throws(CropZoomError) -> Void) throws(CropZoomError) {
        do { _ = try decoder.send(packet: input) } catch { corruptPackets += 1 }
        while true {
            let step: AVStep<Void>
            do { step = try decoder.receive(frame: decoded) } catch {
                corruptPackets += 1
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

    private func resample(_ frame: Frame?) throws(CropZoomError) {
        let e = encoder.pointer
        converted.unref()
        converted.pointer.pointee.sample_rate = e.pointee.sample_rate
        converted.pointer.pointee.format = e.pointee.sample_fmt.rawValue
        try check(
            av_channel_layout_copy(&converted.pointer.pointee.ch_layout, &e.pointee.ch_layout),
            "setting the channel layout")
        if let frame { try resampler.adapt(to: frame, output: converted) }
        try check(swr_convert_frame(resampler.pointer, converted.pointer, frame?.pointer), "resampling audio")
        let n = converted.samples
        guard n > 0 else { return }
        let written = withUnsafeMutablePointer(to: &converted.pointer.pointee.data) { t in
            t.withMemoryRebound(to: UnsafeMutableRawPointer?.self, capacity: 8) { data in
                av_audio_fifo_write(fifo.pointer, data, Int32(n))
            }
        }
        try check(written, "buffering audio")
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
