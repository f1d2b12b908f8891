import CFFmpeg
import CropZoomCore

/// Owns an `AVCodecContext` (`avcodec_alloc_context3` / `avcodec_free_context`), for decoding or
/// encoding. Send/receive return ``AVStep`` so EAGAIN/EOF stay control flow.
///
/// `@unchecked Sendable`: a codec context is driven by exactly one stage thread.
package final class CodecContext: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<AVCodecContext>
    let codec: UnsafePointer<AVCodec>
    /// For error messages.
    package let path: String?

    init(codec: UnsafePointer<AVCodec>, path: String?) throws(CropZoomError) {
        guard let p = avcodec_alloc_context3(codec) else {
            throw CropZoomError(.processing, what: "allocating a codec context", path: path, reason: "out of memory")
        }
        self.pointer = p
        self.codec = codec
        self.path = path
    }

    deinit {
        var p: UnsafeMutablePointer<AVCodecContext>? = pointer
        avcodec_free_context(&p)
    }

    package var name: String { String(cString: codec.pointee.name) }
    package var codecID: AVCodecID { pointer.pointee.codec_id }
    /// Picture size and format (a decoder's, from its stream's parameters).
    package var width: Int { Int(pointer.pointee.width) }
    package var height: Int { Int(pointer.pointee.height) }
    package var pixelFormat: PixelFormat { PixelFormat(pointer.pointee.pix_fmt) }
    /// Tagged full ("JPEG") range.
    package var isTaggedFullRange: Bool { pointer.pointee.color_range == AVCOL_RANGE_JPEG }
    package var sampleAspect: Rational { Rational(pointer.pointee.sample_aspect_ratio) }
    /// The bottom field is shown first (`AV_FIELD_BB`, `AV_FIELD_BT`).
    package var isBottomFieldFirst: Bool { [AV_FIELD_BB, AV_FIELD_BT].contains(pointer.pointee.field_order) }

    /// `avcodec_open2` with the given options; options the codec did not take are returned.
    @discardableResult
    package func open(options: [String: String] = [:], kind: CropZoomError.Kind, what: String) throws(CropZoomError)
        -> [String]
    {
        var dict: OpaquePointer? = nil
        for (k, v) in options { av_dict_set(&dict, k, v, 0) }
        defer { av_dict_free(&dict) }
        try check(avcodec_open2(pointer, codec, &dict), kind, what, path: path)
        var unused: [String] = []
        var entry: UnsafeMutablePointer<AVDictionaryEntry>? = nil
        while true {
            entry = av_dict_get(dict, "", entry, AV_DICT_IGNORE_SUFFIX)
            guard let e = entry else { break }
            unused.append(String(cString: e.pointee.key))
        }
        return unused
    }

    // MARK: decoding

    /// `avcodec_send_packet`; a nil packet starts draining. `.again`: drain frames first, then
    /// send the packet again; `.endOfStream`: the decoder is draining. A packet the decoder
    /// refuses throws with FFmpeg's code (`CropZoomError.code`).
    package func send(packet: Packet?) throws(CropZoomError) -> AVStep<Void> {
        let r = avcodec_send_packet(pointer, packet?.pointer)
        if r == AVCode.again { return .again }
        if r == AVCode.eof { return .endOfStream }
        try check(r, .processing, "decoding with \(name)", path: path)
        return .value(())
    }

    /// `avcodec_receive_frame`.
    package func receive(frame: Frame) throws(CropZoomError) -> AVStep<Void> {
        let r = avcodec_receive_frame(pointer, frame.pointer)
        if r == AVCode.again { return .again }
        if r == AVCode.eof { return .endOfStream }
        try check(r, .processing, "decoding with \(name)", path: path)
        return .value(())
    }

    // MARK: encoding

    /// `avcodec_send_frame`; a nil frame starts draining.
    package func send(frame: Frame?) throws(CropZoomError) {
        let r = avcodec_send_frame(pointer, frame?.pointer)
        if r == AVCode.eof { return }
        try check(r, .processing, "encoding with \(name)", path: path)
    }

    /// Sends a frame (nil = flush) and hands every packet that comes out, received into
    /// `packet`, to `body` (valid during the call; `body` may take its payload).
    package func encode(_ frame: Frame?, into packet: Packet, _ body: (Packet) throws(CropZoomError) -> Void)
        throws(CropZoomError)
    {
        try send(frame: frame)
        while true {
            switch try receive(packet: packet) {
            case .again, .endOfStream: return
            case .value:
                try body(packet)
                packet.unref()
            }
        }
    }

    /// `avcodec_receive_packet`.
    package func receive(packet: Packet) throws(CropZoomError) -> AVStep<Void> {
        let r = avcodec_receive_packet(pointer, packet.pointer)
        if r == AVCode.again { return .again }
        if r == AVCode.eof { return .endOfStream }
        try check(r, .processing, "encoding with \(name)", path: path)
        return .value(())
    }
}

extension UnsafePointer where Pointee == AVCodec {
    var supportedPixelFormats: [AVPixelFormat] {
        var result: [AVPixelFormat] = []
        guard var p = pointee.pix_fmts else { return result }
        while p.pointee != AV_PIX_FMT_NONE {
            result.append(p.pointee)
            p += 1
        }
        return result
    }
    var supportedSampleFormats: [AVSampleFormat] {
        var result: [AVSampleFormat] = []
        guard var p = pointee.sample_fmts else { return result }
        while p.pointee != AV_SAMPLE_FMT_NONE {
            result.append(p.pointee)
            p += 1
        }
        return result
    }
    package var supportedSampleRates: [Int32] {
        var result: [Int32] = []
        guard var p = pointee.supported_samplerates else { return result }
        while p.pointee != 0 {
            result.append(p.pointee)
            p += 1
        }
        return result
    }
    /// `AVCodec.ch_layouts` (ends with a zeroed layout); empty when the codec takes any.
    var supportedChannelLayouts: [AVChannelLayout] {
        var result: [AVChannelLayout] = []
        guard var p = pointee.ch_layouts else { return result }
        while p.pointee.nb_channels != 0 {
            result.append(p.pointee)
            p += 1
        }
        return result
    }
}
