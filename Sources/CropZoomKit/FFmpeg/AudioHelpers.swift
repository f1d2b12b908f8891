import CFFmpeg

/// Owns a `SwrContext` (`swr_alloc` / `swr_free`) converting decoded audio to what an encoder takes.
///
/// `@unchecked Sendable`: owned by one audio stage.
final class Resampler: @unchecked Sendable {
    var pointer: OpaquePointer?

    init(from dec: UnsafeMutablePointer<AVCodecContext>, to enc: UnsafeMutablePointer<AVCodecContext>) throws(CropZoomError) {
        var ctx: OpaquePointer? = nil
        let r = swr_alloc_set_opts2(&ctx, &enc.pointee.ch_layout, enc.pointee.sample_fmt, enc.pointee.sample_rate,
                                    &dec.pointee.ch_layout, dec.pointee.sample_fmt, dec.pointee.sample_rate, 0, nil)
        try check(r, "configuring the audio resampler")
        try check(swr_init(ctx), "starting the audio resampler")
        pointer = ctx
    }

    deinit { swr_free(&pointer) }
}

/// Owns an `AVAudioFifo` (`av_audio_fifo_alloc` / `av_audio_fifo_free`) that re-chunks samples
/// into the encoder's frame size.
final class AudioFIFO: @unchecked Sendable {
    // @unchecked Sendable: owned by one audio stage.
    let pointer: OpaquePointer

    init(format: AVSampleFormat, channels: Int32) throws(CropZoomError) {
        guard let f = av_audio_fifo_alloc(format, channels, 4096) else {
            throw CropZoomError(.processing, what: "allocating an audio buffer", reason: "out of memory")
        }
        pointer = f
    }

    deinit { av_audio_fifo_free(pointer) }

    var count: Int { Int(av_audio_fifo_size(pointer)) }
}
