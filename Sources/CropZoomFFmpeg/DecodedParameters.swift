import CFFmpeg
import CropZoomCore

/// The codec parameters a container does not carry and FFmpeg learns by decoding — what `avformat_find_stream_info`
/// adds to a stream's: a picture's pixel format, bit depth, profile, level, aspect ratio, field order, colour, chroma
/// siting and reorder delay; a sound's sample format, profile, frame length, channel layout and (PCM) bit rate. The
/// MP4/MOV muxer writes them into the index (`pasp`, `fiel`, a MOV sound description's samples per packet), which it
/// writes last, so a repair gives them to ``Remux`` at the end (``Remux/complete(_:)``) from the picture check's
/// decoder and the sound's configuration instead of probing the reference first (docs/design/repair.md, "Session
/// 15"). The size, sample rate and channel count, which the muxer reads when the header is written, are kept to check
/// against it.
package struct DecodedParameters: Sendable, Equatable {
    private var isAudio: Bool
    private var format: Int32
    private var bitsPerRawSample: Int32
    private var profile: Int32
    private var level: Int32
    private var aspect: Rational
    private var fieldOrder: UInt32
    private var colorRange: UInt32
    private var colorPrimaries: UInt32
    private var colorTransfer: UInt32
    private var colorSpace: UInt32
    private var chromaLocation: UInt32
    private var videoDelay: Int32
    private var frameSize: Int32
    private var bitRate: Int64
    /// The channel layout's order and, for FFmpeg's native order, its mask.
    private var channelOrder: UInt32
    private var channelMask: UInt64
    /// What the header is written with.
    private var width: Int32
    private var height: Int32
    private var sampleRate: Int32
    private var channels: Int32

    init(_ p: UnsafePointer<AVCodecParameters>) {
        isAudio = p.pointee.codec_type == AVMEDIA_TYPE_AUDIO
        format = p.pointee.format
        bitsPerRawSample = p.pointee.bits_per_raw_sample
        profile = p.pointee.profile
        level = p.pointee.level
        aspect = Rational(p.pointee.sample_aspect_ratio)
        fieldOrder = p.pointee.field_order.rawValue
        colorRange = p.pointee.color_range.rawValue
        colorPrimaries = p.pointee.color_primaries.rawValue
        colorTransfer = p.pointee.color_trc.rawValue
        colorSpace = p.pointee.color_space.rawValue
        chromaLocation = p.pointee.chroma_location.rawValue
        videoDelay = p.pointee.video_delay
        frameSize = p.pointee.frame_size
        bitRate = p.pointee.bit_rate
        channelOrder = p.pointee.ch_layout.order.rawValue
        channelMask = p.pointee.ch_layout.order == AV_CHANNEL_ORDER_NATIVE ? p.pointee.ch_layout.u.mask : 0
        width = p.pointee.width
        height = p.pointee.height
        sampleRate = p.pointee.sample_rate
        channels = p.pointee.ch_layout.nb_channels
    }

    /// A probed stream's (opened with `avformat_find_stream_info`).
    package init(probed stream: StreamRef) { self.init(stream.parameters) }

    /// What a decoder that has decoded knows (`avcodec_parameters_from_context`).
    package init(decodedBy context: CodecContext) throws(CropZoomError) {
        guard let p = avcodec_parameters_alloc() else {
            throw CropZoomError(.processing, what: "reading a decoder's parameters", reason: "out of memory")
        }
        var owned: UnsafeMutablePointer<AVCodecParameters>? = p
        defer { avcodec_parameters_free(&owned) }
        try check(
            avcodec_parameters_from_context(p, context.pointer), "reading a decoder's parameters", path: context.path)
        self.init(p)
    }

    /// A stream's parameters as its decoder has them once opened, before any packet (`avcodec_open2`,
    /// `avcodec_parameters_from_context`): for uncompressed sound, whose decoder sets its sample format, bit depth
    /// and bit rate there; `path` names the file in an error.
    package init(opening stream: StreamRef, path: String) throws(CropZoomError) {
        let what = "opening a decoder for the reference's stream \(stream.index)"
        guard let codec = avcodec_find_decoder(stream.parameters.pointee.codec_id) else {
            throw CropZoomError(.usage, what: what, path: path, reason: "no decoder for \(stream.codecName)")
        }
        let context = try CodecContext(codec: codec, path: path)
        try check(avcodec_parameters_to_context(context.pointer, stream.parameters), .usage, what, path: path)
        context.pointer.pointee.thread_count = 1
        try context.open(kind: .usage, what: what)
        try self.init(decodedBy: context)
    }

    /// An AAC-LC stream's as FFmpeg's decoder reports it after its first frame (aacdec_template.c): planar float
    /// samples, the LC profile, 1024 samples a frame, the channel configuration's layout (mono: front centre; stereo:
    /// front left and right). Only for what ``/CropZoomCore/AACSyntax/isPlainLowComplexity(_:firstFrame:)`` accepts.
    package static func aacLowComplexity(_ stream: StreamRef) -> DecodedParameters {
        var p = DecodedParameters(stream.parameters)
        p.format = AV_SAMPLE_FMT_FLTP.rawValue
        p.profile = FF_PROFILE_AAC_LOW
        p.frameSize = 1024
        var layout = AVChannelLayout()
        av_channel_layout_default(&layout, p.channels)
        p.channelOrder = layout.order.rawValue
        p.channelMask = layout.order == AV_CHANNEL_ORDER_NATIVE ? layout.u.mask : 0
        av_channel_layout_uninit(&layout)
        return p
    }

    /// Whether the header written from `p` holds: the same picture size, or the same sample rate and channel count.
    func agrees(with p: UnsafePointer<AVCodecParameters>) -> Bool {
        isAudio
            ? sampleRate == p.pointee.sample_rate && channels == p.pointee.ch_layout.nb_channels
            : width == p.pointee.width && height == p.pointee.height
    }

    /// Writes the decoded fields into `p` (the size, sample rate and channel count are left as they are).
    func apply(to p: UnsafeMutablePointer<AVCodecParameters>) {
        p.pointee.format = format
        p.pointee.bits_per_raw_sample = bitsPerRawSample
        p.pointee.profile = profile
        p.pointee.level = level
        p.pointee.sample_aspect_ratio = aspect.rational
        p.pointee.field_order = AVFieldOrder(rawValue: fieldOrder)
        p.pointee.color_range = AVColorRange(rawValue: colorRange)
        p.pointee.color_primaries = AVColorPrimaries(rawValue: colorPrimaries)
        p.pointee.color_trc = AVColorTransferCharacteristic(rawValue: colorTransfer)
        p.pointee.color_space = AVColorSpace(rawValue: colorSpace)
        p.pointee.chroma_location = AVChromaLocation(rawValue: chromaLocation)
        p.pointee.video_delay = videoDelay
        p.pointee.frame_size = frameSize
        p.pointee.bit_rate = bitRate
        if isAudio, channelOrder == AV_CHANNEL_ORDER_NATIVE.rawValue, channelMask != 0 {
            av_channel_layout_uninit(&p.pointee.ch_layout)
            av_channel_layout_from_mask(&p.pointee.ch_layout, channelMask)
        }
    }
}
