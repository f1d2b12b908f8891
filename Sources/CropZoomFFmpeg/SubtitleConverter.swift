import CFFmpeg
import CropZoomCore

/// Converts one text subtitle stream's packets to another text format (SubRip, ASS, WebVTT ↔ MP4's `mov_text`),
/// packet for packet, their times untouched: `avcodec_decode_subtitle2` to the ASS events every text decoder
/// gives, `avcodec_encode_subtitle` from them.
///
/// `@unchecked Sendable`: used by the mux stage's thread only.
package final class SubtitleConverter: @unchecked Sendable {
    package let decoder: CodecContext
    package let encoder: CodecContext
    private var buffer = [UInt8](repeating: 0, count: 1 << 16)
    /// Packets whose text could not be converted (skipped and counted, as damaged packets are).
    package private(set) var failures = 0

    /// The encoder `avcodec_find_encoder` gives for `target`, opened with the decoder's ASS header
    /// (`subtitle_header`, which text encoders need for their styles).
    package init(input: StreamRef, target: AVCodecID, path: String?) throws(CropZoomError) {
        guard let dcodec = avcodec_find_decoder(input.codecID.av), let ecodec = avcodec_find_encoder(target) else {
            throw CropZoomError(
                .processing, path: path,
                reason: "no converter from \(input.codecName) subtitles to "
                    + String(cString: avcodec_get_name(target)))
        }
        decoder = try CodecContext(codec: dcodec, path: path)
        try check(
            avcodec_parameters_to_context(decoder.pointer, input.parameters), "configuring a subtitle decoder",
            path: path)
        decoder.pointer.pointee.pkt_timebase = input.timeBase.rational
        try decoder.open(kind: .processing, what: "opening the \(decoder.name) decoder")
        encoder = try CodecContext(codec: ecodec, path: path)
        let e = encoder.pointer
        e.pointee.time_base = AVRational(num: 1, den: 1000)
        if let header = decoder.pointer.pointee.subtitle_header, decoder.pointer.pointee.subtitle_header_size > 0 {
            let n = Int(decoder.pointer.pointee.subtitle_header_size)
            guard let copy = av_mallocz(n + 1) else {
                throw CropZoomError(.processing, what: "copying a subtitle header", path: path, reason: "out of memory")
            }
            copy.copyMemory(from: header, byteCount: n)
            // The encoder's context owns it from here (freed by avcodec_free_context).
            e.pointee.subtitle_header = copy.assumingMemoryBound(to: UInt8.self)
            e.pointee.subtitle_header_size = Int32(n)
        }
        try encoder.open(kind: .processing, what: "opening the \(encoder.name) encoder")
    }

    /// Whether `codec` is a text subtitle format (`AV_CODEC_PROP_TEXT_SUB`), which converts to another.
    package static func isText(_ codec: AVCodecID) -> Bool {
        guard let d = avcodec_descriptor_get(codec) else { return false }
        return d.pointee.props & AV_CODEC_PROP_TEXT_SUB != 0
    }

    /// Replaces `packet`'s payload with the converted text, its times kept; false when the packet has no text
    /// (an empty cue) or could not be converted (counted in `failures`), and is to be left out.
    package func convert(_ packet: Packet) -> Bool {
        var sub = AVSubtitle()
        var got: Int32 = 0
        let r = avcodec_decode_subtitle2(decoder.pointer, &sub, &got, packet.pointer)
        guard r >= 0, got != 0 else {
            if r < 0 { failures += 1 }
            return false
        }
        defer { avsubtitle_free(&sub) }
        guard sub.num_rects > 0 else { return false }
        let size = buffer.withUnsafeMutableBufferPointer {
            avcodec_encode_subtitle(encoder.pointer, $0.baseAddress, Int32($0.count), &sub)
        }
        guard size > 0 else {
            failures += 1
            return false
        }
        let p = packet.pointer
        let (pts, dts, duration, flags) = (p.pointee.pts, p.pointee.dts, p.pointee.duration, p.pointee.flags)
        av_packet_unref(p)
        guard av_new_packet(p, size) >= 0 else {
            failures += 1
            return false
        }
        buffer.withUnsafeBytes { _ = memcpy(p.pointee.data, $0.baseAddress!, Int(size)) }
        (p.pointee.pts, p.pointee.dts, p.pointee.duration, p.pointee.flags) = (pts, dts, duration, flags)
        return true
    }
}
