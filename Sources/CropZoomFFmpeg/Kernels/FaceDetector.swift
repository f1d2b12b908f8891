import CFFmpeg
import CFaceLoader
import CPlaneKernels
import CropZoomCore
import Foundation

/// The picture `--follow` analyses: a frame's luma as 8-bit grey, area-averaged (`sws_scale`) to a small size of
/// square pixels and turned upright (`cz_plane_orient`: faces are found standing). Owns its planes (`AVFrame`s) and
/// its scaler, made once and reused for every frame.
///
/// `@unchecked Sendable`: prepared by one thread, then read by one other; the pass hands it over through its queue.
package final class FramingPicture: @unchecked Sendable {
    /// The upright picture's size.
    package let width: Int, height: Int
    /// The frame's media time, set by the pass.
    package var time = 0.0
    private let grey: Frame
    private let upright: Frame?
    private let orientation: Orientation
    private var scaler: Scaler?
    private let planes = UnsafeMutablePointer<UnsafePointer<UInt8>?>.allocate(capacity: 4)
    private let strides = UnsafeMutablePointer<Int32>.allocate(capacity: 4)

    /// `codedWidth` x `codedHeight`: the analysis size in the coded picture's orientation; `orientation`: how the
    /// picture is turned upright (a display matrix).
    package init(codedWidth: Int, codedHeight: Int, orientation: Orientation = .identity) throws(CropZoomError) {
        let turned = orientation.apply(width: codedWidth, height: codedHeight)
        width = turned.width
        height = turned.height
        self.orientation = orientation
        do {
            grey = try Frame(width: codedWidth, height: codedHeight, format: AV_PIX_FMT_GRAY8)
            upright =
                orientation.isIdentity ? nil : try Frame(width: width, height: height, format: AV_PIX_FMT_GRAY8)
        } catch {
            planes.deallocate()
            strides.deallocate()
            throw error
        }
    }

    deinit {
        planes.deallocate()
        strides.deallocate()
    }

    /// Scales `picture`'s luma into the plane (`sws_scale`, area averaging). False when swscale cannot read it.
    package func prepare(from picture: Frame) -> Bool {
        let key = Scaler.Key(
            srcW: picture.width, srcH: picture.height, srcFormat: picture.pixelFormat, dstW: grey.width,
            dstH: grey.height, dstFormat: AV_PIX_FMT_GRAY8, flags: Int32(SWS_AREA), srcFullRange: picture.isFullRange,
            dstFullRange: true)
        if scaler?.key != key { scaler = try? Scaler(key) }
        guard let scaler else { return false }
        for i in 0..<4 {
            planes[i] = picture.pointer.pointee.dataPlane(i).map { UnsafePointer($0) }
            strides[i] = picture.pointer.pointee.linesizePlane(i)
        }
        scaler.scale(src: planes, srcStride: strides, into: grey)
        if let upright, let src = grey.pointer.pointee.dataPlane(0), let dst = upright.pointer.pointee.dataPlane(0) {
            let o = orientation
            guard
                cz_plane_orient(
                    src, Int32(grey.width), Int32(grey.height), grey.pointer.pointee.linesizePlane(0), Int32(o.a),
                    Int32(o.b), Int32(o.c), Int32(o.d), dst, upright.pointer.pointee.linesizePlane(0)) == 0
            else { return false }
        }
        return true
    }

    private var shown: Frame { upright ?? grey }
    fileprivate var plane: UnsafePointer<UInt8> { UnsafePointer(shown.pointer.pointee.dataPlane(0)!) }
    fileprivate var stride: Int32 { shown.pointer.pointee.linesizePlane(0) }
}

/// Owns one `cz_faces` (`cz_faces_new` / `cz_faces_free`): OpenCV's face cascade, loaded once.
///
/// `@unchecked Sendable`: used by one thread at a time (the pass's analysis thread).
package final class FaceDetector: @unchecked Sendable {
    private let faces: OpaquePointer
    private let boxes = UnsafeMutablePointer<Int32>.allocate(capacity: 4 * FaceDetector.most)
    private static let most = 32

    /// The cascade files cropzoom looks for (Debian's opencv-data), best first: Haar frontal alt2 found 98 of 100
    /// LFW faces and no false one (Benchmarks/results/face-detectors.md).
    package static let cascades = [
        "/usr/share/opencv4/haarcascades/haarcascade_frontalface_alt2.xml",
        "/usr/share/opencv/haarcascades/haarcascade_frontalface_alt2.xml",
    ]

    /// Loads the first cascade that exists (`CROPZOOM_FACE_CASCADE` names another) with `cz_faces_new` (through
    /// the plugin, ``FacePlugin``).
    package init() throws(CropZoomError) {
        do throws(CropZoomError) { try FacePlugin.check(what: "finding faces") } catch {
            boxes.deallocate()
            throw error
        }
        var candidates = FaceDetector.cascades
        if let own = ProcessInfo.processInfo.environment["CROPZOOM_FACE_CASCADE"], !own.isEmpty {
            candidates = [own]
        }
        guard let path = candidates.first(where: { FileManager.default.fileExists(atPath: $0) }),
            let f = czl_faces_new(path)
        else {
            boxes.deallocate()
            throw CropZoomError(
                .processing, what: "finding faces", setting: .follow,
                reason: "no face detector: OpenCV's cascade \(candidates[0]) is missing or unreadable "
                    + "(apt-get install opencv-data)")
        }
        faces = f
    }

    deinit {
        czl_faces_free(faces)
        boxes.deallocate()
    }

    /// The faces in `picture` (its pixels), biggest first (`cz_faces_detect`); none smaller than `minSize` px.
    package func detect(_ picture: FramingPicture, minSize: Int) -> [Rect] {
        let n = czl_faces_detect(
            faces, picture.plane, Int32(picture.width), Int32(picture.height), picture.stride, Int32(minSize), boxes,
            Int32(FaceDetector.most))
        guard n > 0 else { return [] }
        return (0..<Int(n)).map {
            Rect(
                x: Double(boxes[4 * $0]), y: Double(boxes[4 * $0 + 1]), width: Double(boxes[4 * $0 + 2]),
                height: Double(boxes[4 * $0 + 3]))
        }
    }
}

/// Owns one `cz_patch` (`cz_patch_new` / `cz_patch_free`): a face's picture at its last detection, looked for in the
/// frames after it.
///
/// `@unchecked Sendable`: used by one thread at a time.
package final class FacePatch: @unchecked Sendable {
    private let patch: OpaquePointer
    private let found = UnsafeMutablePointer<Double>.allocate(capacity: 2)

    package init() throws(CropZoomError) {
        guard let p = czl_patch_new() else {
            found.deallocate()
            throw CropZoomError(.processing, what: "tracking faces", reason: "out of memory")
        }
        patch = p
    }

    deinit {
        czl_patch_free(patch)
        found.deallocate()
    }

    /// Keeps `box` of `picture` as the patch (`cz_patch_set`). False when the box is (nearly) off the picture.
    @discardableResult
    package func set(_ picture: FramingPicture, box: Rect) -> Bool {
        var b: (Int32, Int32, Int32, Int32) = (
            Int32(box.x.rounded()), Int32(box.y.rounded()), Int32(box.width.rounded()), Int32(box.height.rounded())
        )
        return withUnsafePointer(to: &b) {
            $0.withMemoryRebound(to: Int32.self, capacity: 4) {
                czl_patch_set(patch, picture.plane, Int32(picture.width), Int32(picture.height), picture.stride, $0)
            }
        } == 0
    }

    /// Where the patch is in `picture` within `radius` px of its top-left corner (x, y) (`cz_patch_find`): the new
    /// corner and the normalised correlation there; nil when the search area is off the picture.
    package func find(_ picture: FramingPicture, x: Double, y: Double, radius: Int) -> (
        x: Double, y: Double, score: Double
    )? {
        let score = czl_patch_find(
            patch, picture.plane, Int32(picture.width), Int32(picture.height), picture.stride, x, y, Int32(radius),
            found)
        guard score > -1.5 else { return nil }
        return (found[0], found[1], score)
    }
}

/// What changed between two analysis pictures (`cz_frame_compare`): for cuts and for the region that moves.
package struct PictureChange: Sendable {
    /// Mean absolute difference of 32 x 18 block means (grey levels).
    package var blockChange: Double
    /// Bhattacharyya distance of the histograms (0 same, 1 disjoint).
    package var histogram: Double
    /// Share of the picture that moved.
    package var moved: Double
    /// The largest region that moved (picture px), nil: none.
    package var region: Rect?

    package init(blockChange: Double, histogram: Double, moved: Double, region: Rect?) {
        self.blockChange = blockChange
        self.histogram = histogram
        self.moved = moved
        self.region = region
    }
}

/// Compares successive analysis pictures (`cz_frame_compare`) in working pictures of its own, kept from frame to
/// frame (`cz_compare_new` once, `cz_compare_free` in deinit).
///
/// `@unchecked Sendable`: used by one thread at a time (the analysis pass's, or the live reframer's).
package final class PictureComparer: @unchecked Sendable {
    private let context: OpaquePointer

    package init() throws(CropZoomError) {
        try FacePlugin.check(what: "comparing frames")
        guard let c = czl_compare_new() else {
            throw CropZoomError(.processing, what: "comparing frames", reason: "out of memory")
        }
        context = c
    }

    deinit { czl_compare_free(context) }

    /// Compares `previous` with `current` (same size); nil when they cannot be compared. `region`: look for the
    /// largest region that moved (else ``PictureChange/region`` is nil and only the cut's figures are measured).
    package func compare(
        _ previous: FramingPicture, _ current: FramingPicture, threshold: Double, region: Bool = true
    ) -> PictureChange? {
        guard previous.width == current.width, previous.height == current.height else { return nil }
        var c = cz_change()
        guard
            czl_frame_compare(
                context, previous.plane, current.plane, Int32(current.width), Int32(current.height), current.stride,
                threshold, region ? 1 : 0, &c) == 0
        else { return nil }
        return PictureChange(
            blockChange: c.block_change, histogram: c.histogram, moved: c.moved,
            region: c.box.2 > 0 ? Rect(x: c.box.0, y: c.box.1, width: c.box.2, height: c.box.3) : nil)
    }
}

/// The plugin the face detector, tracker and frame comparison live in (libCropZoomFaces.so, the `CropZoomFaces`
/// product, beside the executable; `CROPZOOM_FACES_LIBRARY` names another), opened on first use (`czl_error`).
package enum FacePlugin {
    /// Throws, naming why, when the plugin cannot be opened.
    package static func check(what: String) throws(CropZoomError) {
        guard let why = czl_error() else { return }
        throw CropZoomError(
            .processing, what: what, setting: .follow,
            reason: "the face plugin cannot be opened: \(String(cString: why)) (it is built with "
                + "`swift build --product CropZoomFaces` and installed beside cropzoom)")
    }
}
