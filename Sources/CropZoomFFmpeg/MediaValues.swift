import CFFmpeg
import CropZoomCore

// FFmpeg's small value types as Swift values, so that set-up, the engines and the stages name pixel
// formats, matrices and encoders without the C types (rates and time bases: `Rational`, TimeBase.swift);
// only the wrappers and the workers that call FFmpeg convert, through `av`.

/// A pixel format (`AVPixelFormat`).
package struct PixelFormat: Hashable, Sendable, CustomStringConvertible {
    package let av: AVPixelFormat

    package init(_ av: AVPixelFormat) { self.av = av }

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
    package let av: AVColorSpace

    package init(_ av: AVColorSpace) { self.av = av }

    package static let unspecified = ColorMatrix(AVCOL_SPC_UNSPECIFIED)

    package static func == (l: ColorMatrix, r: ColorMatrix) -> Bool { l.av.rawValue == r.av.rawValue }
}

/// An encoder FFmpeg has (`AVCodec`, static data that lives as long as the process).
package struct EncoderRef: @unchecked Sendable {
    // @unchecked Sendable: an `AVCodec` is immutable, registered for the life of the process.
    package let pointer: UnsafePointer<AVCodec>

    package init(_ pointer: UnsafePointer<AVCodec>) { self.pointer = pointer }

    /// Its name (`libx264`).
    package var name: String { String(cString: pointer.pointee.name) }
}
