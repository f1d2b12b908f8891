import CFFmpeg
import CropZoomCore

/// Facts about a pixel format from `av_pix_fmt_desc_get`.
package struct PixelFormatInfo {
    let format: AVPixelFormat
    let descriptor: UnsafePointer<AVPixFmtDescriptor>

    init?(_ format: AVPixelFormat) {
        guard let d = av_pix_fmt_desc_get(format) else { return nil }
        self.format = format
        self.descriptor = d
    }

    package init?(name: String) {
        let f = av_get_pix_fmt(name)
        guard f != AV_PIX_FMT_NONE else { return nil }
        self.init(f)
    }

    package var name: String { String(cString: descriptor.pointee.name) }
    package var log2ChromaW: Int { Int(descriptor.pointee.log2_chroma_w) }
    package var log2ChromaH: Int { Int(descriptor.pointee.log2_chroma_h) }
    package var planeCount: Int { Int(av_pix_fmt_count_planes(format)) }
    package var isRGB: Bool { descriptor.pointee.flags & UInt64(AV_PIX_FMT_FLAG_RGB) != 0 }
    package var hasAlpha: Bool { descriptor.pointee.flags & UInt64(AV_PIX_FMT_FLAG_ALPHA) != 0 }
    package var isHardware: Bool { descriptor.pointee.flags & UInt64(AV_PIX_FMT_FLAG_HWACCEL) != 0 }
    package var isBitstream: Bool { descriptor.pointee.flags & UInt64(AV_PIX_FMT_FLAG_BITSTREAM) != 0 }
    package var bitDepth: Int { Int(descriptor.pointee.comp.0.depth) }
    /// Size multiple the format needs: 2 for subsampled chroma, 1 otherwise.
    package var alignment: (x: Int, y: Int) { (1 << log2ChromaW, 1 << log2ChromaH) }

    /// `av_image_fill_max_pixsteps`: bytes per element of each plane (a value type, so asking
    /// per frame allocates nothing).
    package var planeSteps: SIMD4<Int> {
        var steps: (Int32, Int32, Int32, Int32) = (0, 0, 0, 0)
        withUnsafeMutablePointer(to: &steps) { p in
            p.withMemoryRebound(to: Int32.self, capacity: 4) { av_image_fill_max_pixsteps($0, nil, descriptor) }
        }
        return SIMD4(Int(steps.0), Int(steps.1), Int(steps.2), Int(steps.3))
    }

    /// Samples across and down plane `index` of a width x height picture (chroma rounded up).
    package func planeSize(_ index: Int, width: Int, height: Int) -> (width: Int, height: Int) {
        isChromaPlane(index) ? (-((-width) >> log2ChromaW), -((-height) >> log2ChromaH)) : (width, height)
    }

    /// Whether plane `index` is subsampled (the chroma planes of YUV formats).
    package func isChromaPlane(_ index: Int) -> Bool {
        !isRGB && (index == 1 || index == 2) && planeCount > 1
    }

    /// The full-range "J" formats FFmpeg still uses for JPEG-range YUV, mapped to their plain twin.
    var unJ: AVPixelFormat {
        switch format {
        case AV_PIX_FMT_YUVJ420P: return AV_PIX_FMT_YUV420P
        case AV_PIX_FMT_YUVJ422P: return AV_PIX_FMT_YUV422P
        case AV_PIX_FMT_YUVJ444P: return AV_PIX_FMT_YUV444P
        case AV_PIX_FMT_YUVJ440P: return AV_PIX_FMT_YUV440P
        case AV_PIX_FMT_YUVJ411P: return AV_PIX_FMT_YUV411P
        default: return format
        }
    }
    package var isJ: Bool { unJ != format }
}

func pixelFormatName(_ f: AVPixelFormat) -> String {
    guard let n = av_get_pix_fmt_name(f) else { return "none" }
    return String(cString: n)
}
