import CFFmpeg
import CPlaneKernels
import CropZoomCore

/// Owns one `cz_resampler` per plane (`cz_resampler_new` / `cz_resampler_free`): cropzoom's own
/// resampler for windows that move every frame (animated zoom and pan), where zimg would build
/// a new graph per frame (2.4 ms at 1080p). Buffers are sized once; a frame allocates nothing.
/// It reads the exact fractional window and honours the chroma siting on both sides.
///
/// `@unchecked Sendable`: each transform worker owns its own.
package final class PlaneResampler: @unchecked Sendable {
    package struct Key: Equatable {
        var srcW: Int, srcH: Int, srcFormat: AVPixelFormat
        var dstW: Int, dstH: Int, dstFormat: AVPixelFormat
        package var filter: TranscodeConfiguration.Scaler

        package init(
            srcW: Int, srcH: Int, srcFormat: AVPixelFormat, dstW: Int, dstH: Int, dstFormat: AVPixelFormat,
            filter: TranscodeConfiguration.Scaler
        ) {
            self.srcW = srcW
            self.srcH = srcH
            self.srcFormat = srcFormat
            self.dstW = dstW
            self.dstH = dstH
            self.dstFormat = dstFormat
            self.filter = filter
        }
    }
    package let key: Key
    private var planes: [OpaquePointer] = []
    private let src: PixelFormatInfo, dst: PixelFormatInfo
    /// The downscale (window / output) the tables have taps for. A window larger than the
    /// picture (zooming out) may need more: the planes are made again, for at least twice as
    /// much, up to the scale where the kernel stops widening — a few times in a run at most.
    private var scaleCapacity = 1.0
    private var simd = true

    /// Whether it takes `src` → `dst`: planar YUV or grey on both sides with the same bit depth
    /// and plane count (no depth conversion), any filter but area.
    static func takes(src: AVPixelFormat, dst: AVPixelFormat, filter: TranscodeConfiguration.Scaler) -> Bool {
        guard filter != .area, let s = PixelFormatInfo(src), let d = PixelFormatInfo(dst) else { return false }
        return s.isZimgPlanar && d.isZimgPlanar && s.bitDepth == d.bitDepth && s.planeCount == d.planeCount
    }

    package init(_ key: Key) throws(CropZoomError) {
        self.key = key
        src = PixelFormatInfo(key.srcFormat)!
        dst = PixelFormatInfo(key.dstFormat)!
        try makePlanes()
    }

    deinit {
        for plane in planes { cz_resampler_free(plane) }
    }

    /// One `cz_resampler` per plane, with taps for `scaleCapacity`.
    private func makePlanes() throws(CropZoomError) {
        for plane in planes { cz_resampler_free(plane) }
        planes = []
        let (f, b, c) = Self.kernel(for: key.filter)
        for i in 0..<src.planeCount {
            let (sw, sh) = src.planeSize(i, width: key.srcW, height: key.srcH)
            let (dw, dh) = dst.planeSize(i, width: key.dstW, height: key.dstH)
            guard let r = cz_resampler_new(Int32(sw), Int32(sh), Int32(dw), Int32(dh), f, b, c, scaleCapacity) else {
                throw CropZoomError(.processing, what: "creating a resampler", reason: "out of memory")
            }
            cz_resampler_set_simd(r, simd ? 1 : 0)
            planes.append(r)
        }
    }

    /// cropzoom's kernels for `--scaler`: the cubic with B = 0, C = 0.6 (swscale's bicubic, as
    /// the static path) unless bilinear, Lanczos or nearest is asked (`area` gets the cubic).
    package static func kernel(for filter: TranscodeConfiguration.Scaler) -> (cz_zimg_filter, Double, Double) {
        switch filter {
        case .bilinear: (CZ_ZIMG_BILINEAR, 0, 0)
        case .lanczos: (CZ_ZIMG_LANCZOS, 0, 0)
        case .neighbor: (CZ_ZIMG_POINT, 0, 0)
        default: (CZ_ZIMG_BICUBIC, 0, 0.6)
        }
    }

    /// false: the plain C kernels only (`cz_resampler_set_simd`); tests check both give the same bytes.
    package func setSIMD(_ enabled: Bool) {
        simd = enabled
        for plane in planes { cz_resampler_set_simd(plane, enabled ? 1 : 0) }
    }

    /// Where chroma sample 0's centre sits, in luma pixels: 0.5 (a luma centre) plus the siting
    /// offset swscale is given too (`Scaler.chromaPosition`, 1/256 luma pixel).
    static func chromaCentre(_ location: AVChromaLocation, log2w: Int, log2h: Int) -> (x: Double, y: Double) {
        let p = Scaler.chromaPosition(location, log2w: log2w, log2h: log2h)
        return (0.5 + Double(p.h) / 256, 0.5 + Double(p.v) / 256)
    }

    /// The background's sample value for each plane (Y, Cb, Cr) in `info`'s depth and range:
    /// BT.709 from sRGB 0–255; nil for edge fill.
    /// `--background blur`: -2 for every plane (the kernels leave outside samples as painted).
    package static func backgroundSamples(
        _ b: TranscodeConfiguration.Background, info: PixelFormatInfo, fullRange: Bool
    )
        -> [Int32]?
    {
        if case .blur = b { return [-2, -2, -2, -2] }
        guard case .color(let r8, let g8, let b8) = b else { return nil }
        let (r, g, bl) = (Double(r8) / 255, Double(g8) / 255, Double(b8) / 255)
        let y = 0.2126 * r + 0.7152 * g + 0.0722 * bl
        let cb = (bl - y) / 1.8556
        let cr = (r - y) / 1.5748
        let scale = Double(1 << (info.bitDepth - 8))
        let max = Double((1 << info.bitDepth) - 1)
        func q(_ v: Double) -> Int32 { Int32(min(max, Swift.max(0, (v * scale).rounded()))) }
        if fullRange { return [q(y * 255), q(128 + cb * 255), q(128 + cr * 255)] }
        return [q(16 + y * 219), q(128 + cb * 224), q(128 + cr * 224)]
    }

    /// Resamples `window` (luma pixels of `input`, fractional; it may reach beyond the picture,
    /// which then shows `background`) into all of `output`.
    package func scale(
        _ input: Frame, window: Rect, into output: Frame, background: [Int32]? = nil,
        chroma override: (h: Int64, v: Int64)? = nil
    ) throws(CropZoomError) {
        let sx = window.width / Double(output.width)
        let sy = window.height / Double(output.height)
        let widest = cz_resampler_widest_scale(Self.kernel(for: key.filter).0)
        if max(sx, sy) > scaleCapacity && scaleCapacity < widest {
            scaleCapacity = min(widest, max(2 * scaleCapacity, max(sx, sy)))
            try makePlanes()
        }
        let location = input.pointer.pointee.chroma_location
        for i in 0..<planes.count {
            let chroma = src.isChromaPlane(i)
            let subInW = chroma ? 1 << src.log2ChromaW : 1
            let subInH = chroma ? 1 << src.log2ChromaH : 1
            let subOutW = chroma ? 1 << dst.log2ChromaW : 1
            let subOutH = chroma ? 1 << dst.log2ChromaH : 1
            let cin =
                chroma ? Self.chromaCentre(location, log2w: src.log2ChromaW, log2h: src.log2ChromaH) : (x: 0.5, y: 0.5)
            var cout =
                chroma ? Self.chromaCentre(location, log2w: dst.log2ChromaW, log2h: dst.log2ChromaH) : (x: 0.5, y: 0.5)
            // Turned or mirrored afterwards: sited where the turn will put it on the declared siting.
            if chroma, let o = override { cout = (0.5 + Double(o.h) / 256, 0.5 + Double(o.v) / 256) }
            // Output sample i is centred at output luma (sub_out * i + c_out), source luma
            // (left + that * scale), source sample index (that - c_in) / sub_in.
            let ox = (window.x + cout.x * sx - cin.x) / Double(subInW)
            let oy = (window.y + cout.y * sy - cin.y) / Double(subInH)
            let stepX = sx * Double(subOutW) / Double(subInW)
            let stepY = sy * Double(subOutH) / Double(subInH)
            let (sw, sh) = src.planeSize(i, width: input.width, height: input.height)
            let (dw, dh) = dst.planeSize(i, width: output.width, height: output.height)
            let bytes = src.bitDepth > 8 ? 2 : 1
            let r = cz_resample_plane(
                planes[i], input.pointer.pointee.dataPlane(i), Int(input.pointer.pointee.linesizePlane(i)),
                Int32(sw), Int32(sh), Int32(bytes), ox, oy, stepX, stepY,
                output.pointer.pointee.dataPlane(i), Int(output.pointer.pointee.linesizePlane(i)),
                Int32(dw), Int32(dh), Int32((1 << dst.bitDepth) - 1),
                background.map { i < $0.count ? $0[i] : 0 } ?? -1)
            guard r == 0 else {
                // -1: a picture or output larger than the tables; -2: a window far outside the
                // picture; -3: more vertical taps than a pass takes.
                let why =
                    r == -2
                    ? "reaches too far outside the \(input.width)x\(input.height) picture"
                    : "is beyond what the resampler was made for (\(input.width)x\(input.height) → "
                        + "\(output.width)x\(output.height))"
                throw CropZoomError(
                    .processing, what: "resampling", reason: "the window \(window) \(why), plane \(i), code \(r)")
            }
        }
    }
}
