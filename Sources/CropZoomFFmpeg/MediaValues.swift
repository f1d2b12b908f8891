import CFFmpeg
import CropZoomCore

// FFmpeg's small value types as Swift values, so that set-up, the engines and the stages name pixel
// formats, matrices and encoders without the C types (rates and time bases: `Rational`, TimeBase.swift);
// only the wrappers and the workers that call FFmpeg convert, through `av`.

/// A pixel format (`AVPixelFormat`).
package struct PixelFormat: Hashable, Sendable, CustomStringConvertible {
    let av: AVPixelFormat

    init(_ av: AVPixelFormat) { self.av = av }

    /// `av_get_pix_fmt`; nil for a name FFmpeg does not know.
    package init?(name: String) {
        let f = av_get_pix_fmt(name)
        guard f != AV_PIX_FMT_NONE else { return nil }
        av = f
    }

    package static let none = PixelFormat(AV_PIX_FMT_NONE)

    /// `av_get_pix_fmt_name` ("none" for none).
    package var name: String { pixelFormatName(av) }
    package var description: String { name }
    /// `av_pix_fmt_desc_get`'s facts; nil for none.
    package var info: PixelFormatInfo? { PixelFormatInfo(av) }

    package static func == (l: PixelFormat, r: PixelFormat) -> Bool { l.av.rawValue == r.av.rawValue }
    package func hash(into h: inout Hasher) { h.combine(av.rawValue) }
}

/// The YUV matrix a picture is labelled with (`AVColorSpace`).
package struct ColorMatrix: Equatable, Sendable {
    let av: AVColorSpace

    init(_ av: AVColorSpace) { self.av = av }

    package static let unspecified = ColorMatrix(AVCOL_SPC_UNSPECIFIED)

    package static func == (l: ColorMatrix, r: ColorMatrix) -> Bool { l.av.rawValue == r.av.rawValue }
}

/// An encoder FFmpeg has (`AVCodec`, static data that lives as long as the process).
package struct EncoderRef: @unchecked Sendable {
    // @unchecked Sendable: an `AVCodec` is immutable, registered for the life of the process.
    let pointer: UnsafePointer<AVCodec>

    init(_ pointer: UnsafePointer<AVCodec>) { self.pointer = pointer }

    /// Its name (`libx264`).
    package var name: String { String(cString: pointer.pointee.name) }
}

/// A codec's identity (`AVCodecID`) as a Swift value.
package struct CodecID: Hashable, Sendable, CustomStringConvertible {
    package let av: AVCodecID
    package init(_ av: AVCodecID) { self.av = av }

    package static let none = CodecID(AV_CODEC_ID_NONE)
    package static let h264 = CodecID(AV_CODEC_ID_H264)
    package static let hevc = CodecID(AV_CODEC_ID_HEVC)
    package static let vp9 = CodecID(AV_CODEC_ID_VP9)
    package static let av1 = CodecID(AV_CODEC_ID_AV1)
    package static let prores = CodecID(AV_CODEC_ID_PRORES)
    package static let ffv1 = CodecID(AV_CODEC_ID_FFV1)
    package static let aac = CodecID(AV_CODEC_ID_AAC)
    package static let opus = CodecID(AV_CODEC_ID_OPUS)
    package static let subrip = CodecID(AV_CODEC_ID_SUBRIP)
    package static let movText = CodecID(AV_CODEC_ID_MOV_TEXT)
    package static let webvtt = CodecID(AV_CODEC_ID_WEBVTT)
    package static let ass = CodecID(AV_CODEC_ID_ASS)

    /// FFmpeg's name for it (`avcodec_get_name`: "h264", "aac").
    package var name: String { String(cString: avcodec_get_name(av)) }
    package var description: String { name }
    /// Whether this build of FFmpeg has an encoder for it (`avcodec_find_encoder`).
    package var hasEncoder: Bool { avcodec_find_encoder(av) != nil }

    package static func == (l: CodecID, r: CodecID) -> Bool { l.av.rawValue == r.av.rawValue }
    package func hash(into h: inout Hasher) { h.combine(av.rawValue) }
}

/// What a stream carries (`AVMediaType`).
package enum MediaType: Sendable, Equatable {
    case video, audio, subtitle, data, attachment, unknown

    init(_ av: AVMediaType) {
        switch av {
        case AVMEDIA_TYPE_VIDEO: self = .video
        case AVMEDIA_TYPE_AUDIO: self = .audio
        case AVMEDIA_TYPE_SUBTITLE: self = .subtitle
        case AVMEDIA_TYPE_DATA: self = .data
        case AVMEDIA_TYPE_ATTACHMENT: self = .attachment
        default: self = .unknown
        }
    }

    var av: AVMediaType {
        switch self {
        case .video: return AVMEDIA_TYPE_VIDEO
        case .audio: return AVMEDIA_TYPE_AUDIO
        case .subtitle: return AVMEDIA_TYPE_SUBTITLE
        case .data: return AVMEDIA_TYPE_DATA
        case .attachment: return AVMEDIA_TYPE_ATTACHMENT
        case .unknown: return AVMEDIA_TYPE_UNKNOWN
        }
    }
}

/// A stream's colour primaries (`AVColorPrimaries`).
package struct ColorPrimaries: Sendable {
    let av: AVColorPrimaries
    init(_ av: AVColorPrimaries) { self.av = av }
}

extension ColorMatrix {
    /// BT.2020 non-constant luminance (`AVCOL_SPC_BT2020_NCL`).
    package static let bt2020 = ColorMatrix(AVCOL_SPC_BT2020_NCL)
    /// BT.709 (`AVCOL_SPC_BT709`).
    package static let bt709 = ColorMatrix(AVCOL_SPC_BT709)
}

extension EncoderRef {
    /// The codec it encodes (`AVCodec.id`).
    package var id: CodecID { CodecID(pointer.pointee.id) }
}

extension Rational {
    /// Whether a picture of `width` × `height` with this sample aspect ratio is one FFmpeg accepts
    /// (`av_image_check_sar`).
    package func isValidSampleAspect(width: Int, height: Int) -> Bool {
        av_image_check_sar(UInt32(width), UInt32(height), rational) >= 0
    }
}
