import CFFmpeg
import CropZoomCore

/// Owns a `SwrContext` (`swr_alloc` / `swr_free`) converting decoded audio to what an encoder takes.
///
/// `@unchecked Sendable`: owned by one audio stage.
package final class Resampler: @unchecked Sendable {
    var pointer: OpaquePointer?
    /// The input the context is set up for; a decoder may learn the real channel layout only from
    /// its first frame (AAC with a program config element), see `adapt`.
    private var inputLayout = AVChannelLayout()
    private var inputFormat: Int32, inputRate: Int32

    init(from dec: UnsafeMutablePointer<AVCodecContext>, to enc: UnsafeMutablePointer<AVCodecContext>)
        throws(CropZoomError)
    {
        inputFormat = dec.pointee.sample_fmt.rawValue
        inputRate = dec.pointee.sample_rate
        // From here `deinit` frees what was made, whatever fails.
        try check(av_channel_layout_copy(&inputLayout, &dec.pointee.ch_layout), "setting the channel layout")
        Resampler.name(&inputLayout)
        let r = swr_alloc_set_opts2(
            &pointer, &enc.pointee.ch_layout, enc.pointee.sample_fmt, enc.pointee.sample_rate,
            &inputLayout, dec.pointee.sample_fmt, dec.pointee.sample_rate, 0, nil)
        try check(r, "configuring the audio resampler")
        try check(swr_init(pointer), "starting the audio resampler")
    }

    /// Sets up a new context (`swr_alloc`, `swr_config_frame`, `swr_init`) when `input` differs from what this one
    /// was set up for, and takes it in place of this one; `output` carries the encoder's format. A layout swresample
    /// refuses (damaged sound decoded to 47 channels) throws and leaves the context as it was, so the frames after
    /// it convert as before.
    package func adapt(to input: Frame, output: Frame) throws(CropZoomError) {
        let f = input.pointer
        Resampler.name(&f.pointee.ch_layout)
        guard
            av_channel_layout_compare(&f.pointee.ch_layout, &inputLayout) != 0
                || f.pointee.format != inputFormat || f.pointee.sample_rate != inputRate
        else { return }
        var fresh = swr_alloc()
        guard fresh != nil else {
            throw CropZoomError(.processing, what: "allocating an audio resampler", reason: "out of memory")
        }
        var r = swr_config_frame(fresh, output.pointer, f)
        if r >= 0 { r = swr_init(fresh) }
        if r < 0 { swr_free(&fresh) }
        try check(r, "starting the audio resampler")
        swr_free(&pointer)
        pointer = fresh
        try check(av_channel_layout_copy(&inputLayout, &f.pointee.ch_layout), "setting the channel layout")
        inputFormat = f.pointee.format
        inputRate = f.pointee.sample_rate
    }

    /// An unspecified channel order becomes the default layout of that many channels
    /// (`av_channel_layout_default`), as swresample takes it.
    static func name(_ layout: inout AVChannelLayout) {
        guard layout.order == AV_CHANNEL_ORDER_UNSPEC else { return }
        let n = layout.nb_channels
        av_channel_layout_uninit(&layout)
        av_channel_layout_default(&layout, n)
    }

    deinit {
        swr_free(&pointer)
        av_channel_layout_uninit(&inputLayout)
    }
}

/// Owns an `AVAudioFifo` (`av_audio_fifo_alloc` / `av_audio_fifo_free`) that re-chunks samples
/// into the encoder's frame size.
package final class AudioFIFO: @unchecked Sendable {
    // @unchecked Sendable: owned by one audio stage.
    let pointer: OpaquePointer

    init(format: AVSampleFormat, channels: Int32) throws(CropZoomError) {
        guard let f = av_audio_fifo_alloc(format, channels, 4096) else {
            throw CropZoomError(.processing, what: "allocating an audio buffer", reason: "out of memory")
        }
        pointer = f
    }

    deinit { av_audio_fifo_free(pointer) }

    package var count: Int { Int(av_audio_fifo_size(pointer)) }
}
