import CFFmpeg
import CropZoomCore

/// Owns one `AVFrame` (`av_frame_alloc` / `av_frame_free`).
///
/// `@unchecked Sendable`: a frame belongs to one stage at a time and moves between threads only
/// through a pipeline queue or a pool, which hand over ownership.
package final class Frame: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<AVFrame>

    package init() throws(CropZoomError) {
        guard let p = av_frame_alloc() else {
            throw CropZoomError(.processing, what: "allocating a frame", reason: "out of memory")
        }
        pointer = p
    }

    /// Byte alignment of cropzoom's own pictures: every plane and stride a multiple of 64, as
    /// zimg's AVX-512 paths need (`av_frame_get_buffer` with 0 picks only 32 in FFmpeg 5.1).
    package static let pictureAlignment: Int32 = 64

    /// A frame with its own buffers (`av_frame_get_buffer`, 64-byte aligned) for a picture.
    package convenience init(width: Int, height: Int, format: PixelFormat) throws(CropZoomError) {
        try self.init(width: width, height: height, format: format.av)
    }

    convenience init(width: Int, height: Int, format: AVPixelFormat) throws(CropZoomError) {
        try self.init()
        try allocatePicture(width: width, height: height, format: format)
    }

    /// Gives the frame fresh picture buffers (`av_frame_unref`, then `av_frame_get_buffer`).
    package func allocatePicture(width: Int, height: Int, format: PixelFormat) throws(CropZoomError) {
        try allocatePicture(width: width, height: height, format: format.av)
    }

    func allocatePicture(width: Int, height: Int, format: AVPixelFormat) throws(CropZoomError) {
        av_frame_unref(pointer)
        pointer.pointee.width = Int32(width)
        pointer.pointee.height = Int32(height)
        pointer.pointee.format = format.rawValue
        try check(av_frame_get_buffer(pointer, Frame.pictureAlignment), "allocating a \(width)x\(height) picture")
    }

    deinit {
        var p: UnsafeMutablePointer<AVFrame>? = pointer
        av_frame_free(&p)
    }

    package var width: Int { Int(pointer.pointee.width) }
    package var height: Int { Int(pointer.pointee.height) }
    var pixelFormat: AVPixelFormat { AVPixelFormat(rawValue: pointer.pointee.format) }
    /// The decoder's guess of the presentation time (`best_effort_timestamp`).
    package var bestEffortTimestamp: Int64 {
        get { pointer.pointee.best_effort_timestamp }
        set { pointer.pointee.best_effort_timestamp = newValue }
    }
    /// The duration of the packet the frame came from (`pkt_duration`), in the decoder's time base.
    package var packetDuration: Int64 {
        get { pointer.pointee.pkt_duration }
        set { pointer.pointee.pkt_duration = newValue }
    }
    /// Full ("JPEG") range: a "J" pixel format, or tagged so.
    package var isFullRange: Bool {
        PixelFormatInfo(pixelFormat)?.isJ == true || pointer.pointee.color_range == AVCOL_RANGE_JPEG
    }
    /// The planes of the window whose top-left luma sample is (x, y), by pointer offset — a crop
    /// without a copy — into `planes` and `strides` (4 entries; planes the format lacks: nil, 0).
    /// `info` describes this frame's pixel format.
    package func windowPlanes(
        x: Int, y: Int, info: PixelFormatInfo,
        planes: UnsafeMutablePointer<UnsafePointer<UInt8>?>, strides: UnsafeMutablePointer<Int32>
    ) {
        let steps = info.planeSteps
        for i in 0..<4 {
            guard i < info.planeCount, let base = pointer.pointee.dataPlane(i) else {
                planes[i] = nil
                strides[i] = 0
                continue
            }
            let chroma = info.isChromaPlane(i)
            let px = chroma ? x >> info.log2ChromaW : x
            let py = chroma ? y >> info.log2ChromaH : y
            let ls = pointer.pointee.linesizePlane(i)
            planes[i] = UnsafePointer(base + py * Int(ls) + px * steps[i])
            strides[i] = ls
        }
    }

    package var pts: Int64 {
        get { pointer.pointee.pts }
        set { pointer.pointee.pts = newValue }
    }
    /// Asks the encoder for a keyframe here (`pict_type` I), or leaves the choice to it (none).
    package var forcesKeyframe: Bool {
        get { pointer.pointee.pict_type == AV_PICTURE_TYPE_I }
        set { pointer.pointee.pict_type = newValue ? AV_PICTURE_TYPE_I : AV_PICTURE_TYPE_NONE }
    }
    /// `pts`, or the decoder's best guess (`best_effort_timestamp`) when there is none.
    package var presentationTime: Int64 {
        pointer.pointee.pts != AVCode.noPTS ? pointer.pointee.pts : pointer.pointee.best_effort_timestamp
    }
    package var samples: Int { Int(pointer.pointee.nb_samples) }

    /// `av_frame_is_writable`: true when no one else holds a reference to the buffers.
    package var isWritable: Bool { av_frame_is_writable(pointer) != 0 }

    /// `av_frame_unref`.
    package func unref() { av_frame_unref(pointer) }

    /// `av_frame_move_ref`: takes `other`'s buffers and properties, leaving it empty.
    package func take(_ other: Frame) { av_frame_move_ref(pointer, other.pointer) }
}

/// Plane `i`'s data and line size (the C arrays are tuples in Swift).
extension AVFrame {
    func dataPlane(_ i: Int) -> UnsafeMutablePointer<UInt8>? {
        switch i {
        case 0: return data.0
        case 1: return data.1
        case 2: return data.2
        case 3: return data.3
        default: return nil
        }
    }
    package func linesizePlane(_ i: Int) -> Int32 {
        switch i {
        case 0: return linesize.0
        case 1: return linesize.1
        case 2: return linesize.2
        case 3: return linesize.3
        default: return 0
        }
    }
}
