import CFFmpeg
import CropZoomCore

/// Owns an `AVBSFContext` (`av_bsf_alloc` / `av_bsf_free`): a bitstream filter that rewrites packets of one
/// stream without decoding them.
///
/// `@unchecked Sendable`: used by the mux stage's thread only.
package final class BitstreamFilter: @unchecked Sendable {
    private var pointer: UnsafeMutablePointer<AVBSFContext>?

    /// `av_bsf_get_by_name`, `av_bsf_alloc`, the stream's parameters and time base in, `av_bsf_init`.
    init(name: String, parameters: UnsafePointer<AVCodecParameters>, timeBase: TimeBase) throws(CropZoomError) {
        guard let filter = av_bsf_get_by_name(name) else {
            throw CropZoomError(.processing, what: "filtering a stream", reason: "no bitstream filter \(name)")
        }
        var ctx: UnsafeMutablePointer<AVBSFContext>? = nil
        try check(av_bsf_alloc(filter, &ctx), "filtering a stream (\(name))")
        // Freed here when a step fails: `pointer` is not set yet, so `deinit` does not run.
        var r = avcodec_parameters_copy(ctx!.pointee.par_in, parameters)
        if r >= 0 {
            ctx!.pointee.time_base_in = timeBase.rational
            r = av_bsf_init(ctx)
        }
        if r < 0 {
            av_bsf_free(&ctx)
            throw CropZoomError.ffmpeg(r, .processing, what: "filtering a stream (\(name))", path: nil)
        }
        pointer = ctx
    }

    deinit { av_bsf_free(&pointer) }

    /// Filters `packet` in place, for a filter that gives one packet for each it takes (`av_bsf_send_packet`,
    /// `av_bsf_receive_packet`); false when it kept the packet back.
    package func filter(_ packet: Packet) throws(CropZoomError) -> Bool {
        try check(av_bsf_send_packet(pointer, packet.pointer), "filtering a stream")
        let r = av_bsf_receive_packet(pointer, packet.pointer)
        if r == AVCode.again { return false }
        try check(r, "filtering a stream")
        return true
    }
}
