import CFFmpeg
import CPlaneKernels
import CropZoomCore

/// Owns one `cz_warp` (`cz_warp_new` / `cz_warp_free`): cropzoom's 2-D warp, which resamples every
/// plane of a picture once through an affine map (rotation by any angle, `--transform`, and the
/// blurred background's up-scaling when the picture is turned). Weights are tabulated once; a
/// frame allocates nothing.
///
/// `@unchecked Sendable`: each transform worker owns its own.
package final class PlaneWarper: @unchecked Sendable {
    private let warp: OpaquePointer
    /// The six numbers handed to `cz_warp_plane` (made once).
    private let matrix = UnsafeMutablePointer<Double>.allocate(capacity: 6)

    /// The cubic (`--scaler bicubic`, `area` and `lanczos`, whose 3 lobes do not fit 4x4 taps),
    /// bilinear or nearest.
    package init(_ filter: TranscodeConfiguration.Scaler) throws(CropZoomError) {
        let (f, b, c) = PlaneResampler.kernel(for: filter == .lanczos ? .bicubic : filter)
        guard let w = cz_warp_new(f, b, c) else {
            throw CropZoomError(.processing, what: "warping", reason: "out of memory")
        }
        warp = w
    }

    deinit {
        cz_warp_free(warp)
        matrix.deallocate()
    }

    /// Resamples every plane of `source` into `target` through `map` (target luma coordinates →
    /// source luma coordinates, pixel centres at +0.5), each plane with its own subsampling and
    /// the chroma siting `location` on both sides (`cz_warp_plane`). `background`: a sample value
    /// per plane for outputs beyond the picture, nil to repeat the edge, -2 to keep what is there.
    package func warp(
        _ source: Frame, through map: Affine, into target: Frame, location: AVChromaLocation,
        background: [Int32]?
    ) throws(CropZoomError) {
        guard let src = PixelFormatInfo(source.pixelFormat), let dst = PixelFormatInfo(target.pixelFormat) else {
            throw CropZoomError(.processing, what: "warping", reason: "unknown pixel format")
        }
        let m = matrix
        for i in 0..<min(src.planeCount, dst.planeCount) {
            let p = Self.planeMap(map, plane: i, src: src, dst: dst, location: location)
            m[0] = p.a
            m[1] = p.b
            m[2] = p.c
            m[3] = p.d
            m[4] = p.tx
            m[5] = p.ty
            let (sw, sh) = src.planeSize(i, width: source.width, height: source.height)
            let (dw, dh) = dst.planeSize(i, width: target.width, height: target.height)
            let r = cz_warp_plane(
                warp, source.pointer.pointee.dataPlane(i), Int(source.pointer.pointee.linesizePlane(i)),
                Int32(sw), Int32(sh), Int32(src.bitDepth > 8 ? 2 : 1), m,
                target.pointer.pointee.dataPlane(i), Int(target.pointer.pointee.linesizePlane(i)),
                Int32(dw), Int32(dh), Int32((1 << dst.bitDepth) - 1),
                background.map { i < $0.count ? $0[i] : 0 } ?? -1)
            guard r == 0 else {
                throw CropZoomError(
                    .processing, what: "warping", reason: "plane \(i) of \(source.width)x\(source.height)")
            }
        }
    }

    /// `map` (luma coordinates, target → source) for plane `i`: sample index → luma coordinates
    /// on the target side, the map, luma coordinates → sample index on the source side, each
    /// with its subsampling and chroma siting.
    package static func planeMap(
        _ map: Affine, plane i: Int, src: PixelFormatInfo, dst: PixelFormatInfo, location: AVChromaLocation
    ) -> Affine {
        func side(_ info: PixelFormatInfo) -> (w: Double, h: Double, centre: (x: Double, y: Double)) {
            guard info.isChromaPlane(i) else { return (1, 1, (0.5, 0.5)) }
            return (
                Double(1 << info.log2ChromaW), Double(1 << info.log2ChromaH),
                PlaneResampler.chromaCentre(location, log2w: info.log2ChromaW, log2h: info.log2ChromaH)
            )
        }
        let d = side(dst)
        let s = side(src)
        return Affine.scale(d.w, d.h, tx: d.centre.x, ty: d.centre.y).then(map)
            .then(.scale(1 / s.w, 1 / s.h, tx: -s.centre.x / s.w, ty: -s.centre.y / s.h))
    }

    /// Whether some corner of a width x height target maps (through `map`) outside the picture.
    package static func showsOutside(_ map: Affine, width: Int, height: Int, picture: Frame) -> Bool {
        let (w, h) = (Double(width), Double(height))
        let (pw, ph) = (Double(picture.width), Double(picture.height))
        func outside(_ x: Double, _ y: Double) -> Bool {
            let p = map.apply(x, y)
            return p.x < -1e-6 || p.y < -1e-6 || p.x > pw + 1e-6 || p.y > ph + 1e-6
        }
        return outside(0, 0) || outside(w, 0) || outside(0, h) || outside(w, h)
    }
}
