import CFFmpeg
import CropZoomCore

/// The decode stage for the video stream (`avcodec_send_packet` / `avcodec_receive_frame`).
package final class VideoDecoder: @unchecked Sendable {
    // @unchecked Sendable: owned and driven by one thread (the decode stage).
    package let context: CodecContext
    package let streamIndex: Int
    package let timeBase: TimeBase
    /// Packets the decoder refused as invalid, and damaged frames (concealed, or flagged).
    package var corruptPackets: Int { max(refused + flaggedFrames, refused + Int(cz_counter_get(concealed))) }
    private var refused = 0
    private var flaggedFrames = 0
    /// Concealment reports from FFmpeg's log, counted per decoder (see `cz_log_install`).
    private let concealed: UnsafeMutableRawPointer
    private let frame: Frame

    /// Sets the decoder up from the stream's parameters (`avcodec_parameters_to_context`); its
    /// size, pixel format and colour fields are readable before `open(threads:)`.
    /// `strict` (`--strict`, fixed at set-up): a frame the decoder concealed or could not decode is an error.
    package let strict: Bool

    package init(input: InputFormat, streamIndex: Int, strict: Bool = false) throws(CropZoomError) {
        self.strict = strict
        let st = input.stream(streamIndex)
        let par = st.parameters
        guard let codec = avcodec_find_decoder(par.pointee.codec_id) else {
            let name = String(cString: avcodec_get_name(par.pointee.codec_id))
            let reason =
                par.pointee.codec_id == AV_CODEC_ID_NONE
                ? "the video codec is unknown to this FFmpeg"
                : "no decoder for the video codec '\(name)' in this FFmpeg"
            throw CropZoomError(.inputUnreadable, path: input.path, reason: reason)
        }
        context = try CodecContext(codec: codec, path: input.path)
        try check(
            avcodec_parameters_to_context(context.pointer, par), "configuring the video decoder", path: input.path)
        context.pointer.pointee.pkt_timebase = st.timeBase.rational
        // Nothing may throw once the counter exists: a partly initialised object gets no deinit,
        // and the counter would leak.
        frame = try Frame()
        guard let counter = cz_counter_new() else {
            throw CropZoomError(.processing, what: "allocating a counter", reason: "out of memory")
        }
        concealed = counter
        context.pointer.pointee.opaque = counter
        self.streamIndex = streamIndex
        self.timeBase = st.timeBase
    }

    deinit { cz_counter_free(concealed) }

    /// Opens the decoder (`avcodec_open2`) with `threads` frame threads (slice threads where
    /// the codec has no frame threading). `explode`: a packet with an error the decoder would only log and decode
    /// past is refused (`AV_EF_EXPLODE`). `counted`: the pictures are only counted, never looked at, so the loop
    /// filter is left out (`skip_loop_filter = AVDISCARD_ALL`: deblocking and SAO read nothing from the stream, so a
    /// damaged or mismatched slice is refused or concealed as before).
    package func open(threads: Int, explode: Bool = false, counted: Bool = false) throws(CropZoomError) {
        if explode { context.pointer.pointee.err_recognition |= AV_EF_EXPLODE }
        if counted { context.pointer.pointee.skip_loop_filter = AVDISCARD_ALL }
        context.pointer.pointee.thread_count = Int32(threads)
        context.pointer.pointee.thread_type = FF_THREAD_FRAME | FF_THREAD_SLICE
        try context.open(kind: .inputUnreadable, what: "opening the \(context.name) decoder")
    }

    /// Sends one packet (nil = end of stream) and hands every frame that comes out to `body`.
    /// The frame passed to `body` is only valid during the call.
    package func decode(_ packet: Packet?, _ body: (Frame) throws(CropZoomError) -> Void)
        throws(CropZoomError)
    {
        var refusal: CropZoomError? = nil
        while true {
            let step: AVStep<Void>
            do { step = try context.send(packet: packet) } catch {
                refusal = error
                break
            }
            guard case .again = step else { break }
            // The decoder's output is full: drain, then send the packet again.
            try drain(strict: strict, body)
        }
        if strict && cz_counter_get(concealed) > 0 {
            throw CropZoomError(
                .processing, what: "decoding (\(setting: .strict))", path: context.path, setting: .strict,
                reason: "damaged frame")
        }
        if let refusal {
            refused += 1
            if strict {
                throw CropZoomError.ffmpeg(
                    refusal.code ?? AVCode.invalidData, .processing,
                    what: "decoding a damaged packet (\(setting: .strict))",
                    path: context.path)
            }
        }
        try drain(strict: strict, body)
    }

    private func drain(strict: Bool, _ body: (Frame) throws(CropZoomError) -> Void) throws(CropZoomError) {
        while true {
            let step: AVStep<Void>
            do {
                step = try context.receive(frame: frame)
            } catch {
                if error.code == AVCode.invalidData && !strict {
                    refused += 1
                    continue
                }
                throw error
            }
            switch step {
            case .again, .endOfStream: return
            case .value:
                defer { frame.unref() }
                if frame.pointer.pointee.decode_error_flags != 0
                    || frame.pointer.pointee.flags & AV_FRAME_FLAG_CORRUPT != 0
                {
                    // Damaged but concealed: still a frame of the clip, so it is kept and counted.
                    flaggedFrames += 1
                    if strict {
                        throw CropZoomError(
                            .processing, what: "decoding (\(setting: .strict))", path: context.path,
                            setting: .strict,
                            reason: "damaged frame")
                    }
                }
                try body(frame)
            }
        }
    }
}
