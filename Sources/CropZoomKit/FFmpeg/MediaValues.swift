import CFFmpeg

// FFmpeg's small value types as Swift values, so that set-up, the engines and the stages name pixel
// formats, matrices and encoders without the C types (rates and time bases: `Rational`, TimeBase.swift);
// only the wrappers and the workers that call FFmpeg convert, through `av`.

/// A pixel format (`AVPixelFormat`).
struct PixelFormat: Hashable, Sendable, CustomStringConvertible {
    let av: AVPixelFormat

    init(_ av: AVPixelFormat) { self.av = av }

    /// `av_get_pix_fmt`; nil for a name FFmpeg does not know.
    init?(name: String) {
        let f = av_get_pix_fmt(name)
        guard f != AV_PIX_FMT_NONE else { return nil }
        av = f
    }

    static let none = PixelFormat(AV_PIX_FMT_NONE)

    /// `av_get_pix_fmt_name` ("none" for none).
    var name: String { pixelFormatName(av) }
    var description: String { name }
    /// `av_pix_fmt_desc_get`'s facts; nil for none.
    var info: PixelFormatInfo? { PixelFormatInfo(av) }

    static func == (l: PixelFormat, r: PixelFormat) -> Bool { l.av.rawValue == r.av.rawValue }
    func hash(into h: inout Hasher) { h.combine(av.rawValue) }
}

/// The YUV matrix a picture is labelled with (`AVColorSpace`).
struct ColorMatrix: Equatable, Sendable {
    let av: AVColorSpace

    init(_ av: AVColorSpace) { self.av = av }

    static let unspecified = ColorMatrix(AVCOL_SPC_UNSPECIFIED)

    static func == (l: ColorMatrix, r: ColorMatrix) -> Bool { l.av.rawValue == r.av.rawValue }
}

/// An encoder FFmpeg has (`AVCodec`, static data that lives as long as the process).
struct EncoderRef: @unchecked Sendable {
    // @unchecked Sendable: an `AVCodec` is immutable, registered for the life of the process.
    let pointer: UnsafePointer<AVCodec>

    init(_ pointer: UnsafePointer<AVCodec>) { self.pointer = pointer }

    /// Its name (`libx264`).
    var name: String { String(cString: pointer.pointee.name) }
}
