import CFFmpeg
import CropZoomCore

/// A borrowed view of one stream of an open input or output (an `AVStream` its format context
/// owns): it keeps that context alive, so the view can never outlive the stream (rsmpeg's
/// `AVStreamRef`). Values are read through properties; `pointer` is for the FFmpeg wrappers
/// that must hand the stream to a C function.
package struct StreamRef: @unchecked Sendable {
    // @unchecked Sendable: a view is used by the stage that owns its format context.
    private let owner: AnyObject
    let pointer: UnsafeMutablePointer<AVStream>

    init(_ pointer: UnsafeMutablePointer<AVStream>, owner: AnyObject) {
        self.pointer = pointer
        self.owner = owner
    }

    package var index: Int { Int(pointer.pointee.index) }
    package var timeBase: TimeBase { TimeBase(pointer.pointee.time_base) }
    /// The first timestamp, in `timeBase`; nil when unknown.
    package var startTime: Int64? {
        let t = pointer.pointee.start_time
        return t == AVCode.noPTS ? nil : t
    }
    /// The duration in `timeBase` (0 or less: unknown).
    package var duration: Int64 { pointer.pointee.duration }
    /// The codec parameters (`AVCodecParameters`), borrowed with the stream.
    var parameters: UnsafeMutablePointer<AVCodecParameters> { pointer.pointee.codecpar }
    package var mediaType: MediaType { MediaType(parameters.pointee.codec_type) }
    package var codecID: CodecID { CodecID(parameters.pointee.codec_id) }
    /// Bytes of codec configuration in the header (`extradata_size`).
    package var extradataSize: Int { Int(parameters.pointee.extradata_size) }
    /// The codec configuration's bytes (`extradata`: an AAC stream's AudioSpecificConfig).
    package var extradata: [UInt8] {
        guard let data = parameters.pointee.extradata, extradataSize > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: extradataSize))
    }
    /// The colour primaries the stream is labelled with (`color_primaries`).
    package var colorPrimaries: ColorPrimaries { ColorPrimaries(parameters.pointee.color_primaries) }
    /// Why a decoder cannot be opened with this stream's parameters (`avcodec_parameters_to_context`,
    /// `avcodec_open2`): a damaged header (65281 channels, a sample rate of 0 …); nil when it opens, or when this
    /// FFmpeg has no decoder for the codec (a stream that can only be copied is not judged).
    package var damagedParameters: String? {
        guard let codec = avcodec_find_decoder(codecID.av), let ctx = avcodec_alloc_context3(codec) else { return nil }
        defer {
            var p: UnsafeMutablePointer<AVCodecContext>? = ctx
            avcodec_free_context(&p)
        }
        var r = avcodec_parameters_to_context(ctx, parameters)
        if r >= 0 {
            ctx.pointee.thread_count = 1
            r = avcodec_open2(ctx, codec, nil)
        }
        return r < 0 ? AVCode.message(r) : nil
    }
    /// `avcodec_get_name` of the codec ("h264", "aac"; "none" when unknown).
    package var codecName: String { codecID.name }
    /// `AV_DISPOSITION_*` flags (default, attached picture …).
    package var disposition: Int32 { pointer.pointee.disposition }
    /// The frame count the container states (`nb_frames`; 0: unknown).
    package var declaredFrames: Int64 { pointer.pointee.nb_frames }
    package var isAudio: Bool { mediaType == .audio }
    package var isVideo: Bool { mediaType == .video }
    package var isSubtitle: Bool { mediaType == .subtitle }
    /// A cover picture (`AV_DISPOSITION_ATTACHED_PIC`), not video.
    package var isAttachedPicture: Bool { pointer.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC != 0 }
    package var averageFrameRate: Rational { Rational(pointer.pointee.avg_frame_rate) }
    package var realFrameRate: Rational { Rational(pointer.pointee.r_frame_rate) }
    package var sampleAspectRatio: Rational { Rational(pointer.pointee.sample_aspect_ratio) }
    /// The frame rate the stream states: the average, else the "real" base rate (either may be unknown).
    package var statedFrameRate: Rational { averageFrameRate.isKnown ? averageFrameRate : realFrameRate }
    /// The YUV matrix the stream is labelled with (`color_space`).
    package var colorMatrix: ColorMatrix { ColorMatrix(parameters.pointee.color_space) }
    /// The Dolby Vision configuration record's profile and base-layer compatibility (stream side data
    /// `AV_PKT_DATA_DOVI_CONF`); nil without one.
    package var dolbyVision: (profile: Int, level: Int, compatibility: Int)? {
        guard let raw = sideData(AV_PKT_DATA_DOVI_CONF),
            raw.count >= MemoryLayout<AVDOVIDecoderConfigurationRecord>.size, let base = raw.baseAddress
        else { return nil }
        let r = base.loadUnaligned(as: AVDOVIDecoderConfigurationRecord.self)
        return (Int(r.dv_profile), Int(r.dv_level), Int(r.dv_bl_signal_compatibility_id))
    }

    /// "PQ" (SMPTE ST 2084) or "HLG" (ARIB STD-B67) for HDR video by its transfer characteristic; nil otherwise.
    package var hdrTransfer: String? {
        switch parameters.pointee.color_trc {
        case AVCOL_TRC_SMPTE2084: return "PQ"
        case AVCOL_TRC_ARIB_STD_B67: return "HLG"
        default: return nil
        }
    }
    /// Audio: samples per second and channels (0: unknown, as in an MPEG-TS stream not yet seen).
    package var sampleRate: Int { Int(parameters.pointee.sample_rate) }
    package var channelCount: Int { Int(parameters.pointee.ch_layout.nb_channels) }
    /// An uncompressed sound sample frame's bytes, all channels (`av_get_bits_per_sample`); 0 for other codecs.
    package var sampleFrameBytes: Int { Int(av_get_bits_per_sample(parameters.pointee.codec_id)) / 8 * channelCount }
    /// Samples the decoder drops at the start (Opus's pre-skip), at the codec's rate.
    package var initialPadding: Int64 { Int64(parameters.pointee.initial_padding) }
    /// The demuxer reads none of its packets (`AVDISCARD_ALL`).
    package var isDiscarded: Bool { pointer.pointee.discard == AVDISCARD_ALL }
    /// How the stream's frames are scanned, and what that means: nil when unknown, "progressive" or
    /// an interlaced order ("tt", top field first, …).
    package var fieldOrder: (name: String, meaning: String)? { StreamRef.describe(parameters.pointee.field_order) }

    /// `AVFieldOrder` in ffprobe's name, and what it means.
    static func describe(_ f: AVFieldOrder) -> (name: String, meaning: String)? {
        switch f {
        case AV_FIELD_PROGRESSIVE: return ("progressive", "progressive")
        case AV_FIELD_TT: return ("tt", "top field first")
        case AV_FIELD_BB: return ("bb", "bottom field first")
        case AV_FIELD_TB: return ("tb", "top field coded first, bottom shown first")
        case AV_FIELD_BT: return ("bt", "bottom field coded first, top shown first")
        default: return nil
        }
    }

    /// The stream's tag `key` (`av_dict_get`), nil when absent.
    package func metadata(_ key: String) -> String? {
        av_dict_get(pointer.pointee.metadata, key, nil, 0).map { String(cString: $0.pointee.value) }
    }

    /// The stream's side data of `type` (`av_stream_get_side_data`), borrowed with the stream.
    func sideData(_ type: AVPacketSideDataType) -> UnsafeRawBufferPointer? {
        var size = 0
        guard let p = av_stream_get_side_data(pointer, type, &size) else { return nil }
        return UnsafeRawBufferPointer(start: p, count: size)
    }

    /// The orientation a player applies, from the display matrix side data. HTC phones wrote
    /// Matroska files with no matrix and the rotation in the track name (`htc_video_rotA-090`);
    /// players such as ExoPlayer honour it, and so does cropzoom.
    package var displayOrientation: Orientation {
        guard let data = sideData(AV_PKT_DATA_DISPLAYMATRIX), data.count >= 36 else {
            if let title = metadata("title"), title.hasPrefix("htc_video_rotA-"),
                let degrees = Int(title.dropFirst("htc_video_rotA-".count))
            {
                return Orientation.rotation(clockwise: degrees) ?? .identity
            }
            return .identity
        }
        let m = (0..<9).map { data.loadUnaligned(fromByteOffset: $0 * 4, as: Int32.self) }
        return Orientation(displayMatrix: m) ?? .identity
    }
}
