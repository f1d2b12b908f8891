import CFFmpeg
import CPlaneKernels
import CropZoomCore

/// The sizes of one stream's motion analysis (`cz_motion_factor`, `cz_motion_geometry_init`): the coded luma
/// averaged down by a power of two to at most 960 px wide (`CZ_MOTION_ANALYSIS_WIDTH`).
package struct MotionGeometry: @unchecked Sendable {
    // `@unchecked Sendable`: a plain C struct of numbers, copied by value.
    fileprivate var g = cz_motion_geometry()

    /// nil when the picture is too small to analyse (under 16 x 16 analysis pixels).
    package init?(width: Int, height: Int) {
        let k = cz_motion_factor(Int32(width), Int32(CZ_MOTION_ANALYSIS_WIDTH))
        guard cz_motion_geometry_init(&g, Int32(width), Int32(height), k) == 0 else { return nil }
    }

    /// The picture the motion is measured on: the coded one, or for pixels that are not square (`pixelAspect`, a
    /// pixel's width / height) the coded one stretched to square pixels (its width × pixelAspect), so that a turn
    /// is measured as it is shown. nil when too small.
    package init?(codedWidth width: Int, height: Int, pixelAspect: Double) {
        let w = pixelAspect > 0 && pixelAspect.isFinite ? max(1, Int((Double(width) * pixelAspect).rounded())) : width
        self.init(width: w, height: height)
    }

    /// The picture's size (square pixels).
    package var width: Int { Int(g.width) }
    package var height: Int { Int(g.height) }

    /// Full-resolution pixels per analysis pixel.
    package var factor: Int { Int(g.factor) }
    package var analysisWidth: Int { Int(g.analysis_width) }
    package var analysisHeight: Int { Int(g.analysis_height) }
}

/// Owns one `cz_motion_frame` (`cz_motion_frame_new` / `cz_motion_frame_free`): a frame's analysis plane, pyramid
/// and points, prepared once and read by the two estimates it is part of. Allocates nothing after its init.
///
/// `@unchecked Sendable`: written by `prepare` on one thread, then only read (by estimates on any thread) until it
/// is prepared again; the pass that owns it hands it over through its queues.
package final class MotionFrame: @unchecked Sendable {
    fileprivate let frame: OpaquePointer
    /// Points found at the finest level by the last `prepare`.
    package private(set) var points = 0
    /// The frame's media time, set by the pass.
    package var time = 0.0

    /// A picture that is not planar YUV or grey (packed YUYV from a camera, RGB from a screen grab) is first
    /// converted to grey by swscale, into a plane made for the first such picture and reused.
    private var grey: Frame?
    private var greyScaler: Scaler?
    private let planes = UnsafeMutablePointer<UnsafePointer<UInt8>?>.allocate(capacity: 4)
    private let strides = UnsafeMutablePointer<Int32>.allocate(capacity: 4)

    package init(_ geometry: MotionGeometry) throws(CropZoomError) {
        var g = geometry.g
        guard let f = cz_motion_frame_new(&g) else {
            planes.deallocate()
            strides.deallocate()
            throw CropZoomError(.processing, what: "analysing motion", reason: "out of memory")
        }
        frame = f
    }

    deinit {
        cz_motion_frame_free(frame)
        planes.deallocate()
        strides.deallocate()
    }

    /// Downscales the luma of `picture` and prepares it (`cz_motion_frame_prepare_luma`); any other pixel format, or
    /// a picture stretched to square pixels (the geometry wider or narrower than the picture), is made grey at the
    /// geometry's size first (`sws_scale`). False when the picture's height is not the geometry's or swscale cannot
    /// read its format.
    package func prepare(from picture: Frame, geometry: MotionGeometry) -> Bool {
        guard picture.height == Int(geometry.g.height) else { return false }
        if let info = PixelFormatInfo(picture.pixelFormat), info.isZimgPlanar,
            picture.width == Int(geometry.g.width), let base = picture.pointer.pointee.dataPlane(0)
        {
            let stride = Int(picture.pointer.pointee.linesizePlane(0))
            let bytes: Int32 = info.bitDepth > 8 ? 2 : 1
            points = Int(cz_motion_frame_prepare_luma(frame, base, stride, bytes, Int32(info.bitDepth)))
            return true
        }
        guard let plane = greyPlane(of: picture, width: Int(geometry.g.width)),
            let base = plane.pointer.pointee.dataPlane(0)
        else { return false }
        let stride = Int(plane.pointer.pointee.linesizePlane(0))
        points = Int(cz_motion_frame_prepare_luma(frame, base, stride, 1, 8))
        return true
    }

    /// `picture` as 8-bit grey `width` wide (`sws_scale`: point sampled at the same size, else area-averaged or
    /// bicubic), nil when swscale cannot convert it.
    private func greyPlane(of picture: Frame, width: Int) -> Frame? {
        let flags = width == picture.width ? SWS_POINT : width < picture.width ? SWS_AREA : SWS_BICUBIC
        let key = Scaler.Key(
            srcW: picture.width, srcH: picture.height, srcFormat: picture.pixelFormat, dstW: width,
            dstH: picture.height, dstFormat: AV_PIX_FMT_GRAY8, flags: Int32(flags),
            srcFullRange: picture.isFullRange, dstFullRange: true)
        if greyScaler?.key != key {
            greyScaler = try? Scaler(key)
            grey = try? Frame(width: width, height: picture.height, format: AV_PIX_FMT_GRAY8)
        }
        guard let greyScaler, let grey else { return nil }
        for i in 0..<4 {
            planes[i] = picture.pointer.pointee.dataPlane(i).map { UnsafePointer($0) }
            strides[i] = picture.pointer.pointee.linesizePlane(i)
        }
        greyScaler.scale(src: planes, srcStride: strides, into: grey)
        return grey
    }
}

/// Owns one `cz_motion` (`cz_motion_new` / `cz_motion_free`): the scratch of one thread's pair estimates.
///
/// `@unchecked Sendable`: used by one thread at a time (each analysis worker owns its own).
package final class MotionEstimator: @unchecked Sendable {
    private let context: OpaquePointer
    private let factor: Double
    private let result = UnsafeMutablePointer<Double>.allocate(capacity: 4)

    package init(_ geometry: MotionGeometry) throws(CropZoomError) {
        var g = geometry.g
        guard let c = cz_motion_new(&g) else {
            throw CropZoomError(.processing, what: "analysing motion", reason: "out of memory")
        }
        context = c
        factor = Double(geometry.factor)
    }

    deinit {
        cz_motion_free(context)
        result.deallocate()
    }

    /// F_t from frame t-1 (`previous`) to frame t (`current`), in full-resolution centred coded pixels
    /// (`cz_motion_estimate`); `measured` false when either frame has too little texture (the motion is then the
    /// identity, not a guess).
    package func estimate(_ previous: MotionFrame, _ current: MotionFrame) -> (motion: Similarity, measured: Bool) {
        var stats = cz_motion_stats()
        let status = cz_motion_estimate(context, previous.frame, current.frame, result, &stats)
        guard status == Int32(CZ_MOTION_OK.rawValue) else { return (.identity, false) }
        return (Similarity(a: result[0], b: result[1], tx: result[2] * factor, ty: result[3] * factor), true)
    }
}
