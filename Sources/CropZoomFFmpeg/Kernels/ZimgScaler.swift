import CFFmpeg
import CPlaneKernels
import CropZoomCore

/// Owns a zimg resize graph (`cz_zimg_new` / `cz_zimg_free`, over `zimg_filter_graph_build`)
/// for one fixed crop + scale of planar YUV or grey pictures: cropzoom's kernel for pictures of
/// more than 8 bits, chosen by measurement (Benchmarks/README.md, "Scaling kernel"). It reads the
/// exact window (zimg's `active_region`, sub-pixel capable), honours the chroma siting, and
/// allocates nothing per frame.
///
/// `@unchecked Sendable`: each transform worker owns its own graph.
package final class ZimgScaler: @unchecked Sendable {
    private let pointer: OpaquePointer
    package let key: Key

    package struct Key: Equatable {
        var srcW: Int, srcH: Int, srcFormat: AVPixelFormat
        /// The window of the source picture to read (may be fractional: animated zoom and pan).
        package var window: Rect
        var dstW: Int, dstH: Int, dstFormat: AVPixelFormat
        package var filter: TranscodeConfiguration.Scaler
        package var fullRange: Bool
        var chromaLocation: AVChromaLocation

        package init(
            srcW: Int, srcH: Int, srcFormat: AVPixelFormat, window: Rect, dstW: Int, dstH: Int,
            dstFormat: AVPixelFormat, filter: TranscodeConfiguration.Scaler, fullRange: Bool,
            chromaLocation: AVChromaLocation
        ) {
            self.srcW = srcW
            self.srcH = srcH
            self.srcFormat = srcFormat
            self.window = window
            self.dstW = dstW
            self.dstH = dstH
            self.dstFormat = dstFormat
            self.filter = filter
            self.fullRange = fullRange
            self.chromaLocation = chromaLocation
        }
    }

    /// Why zimg cannot do `src` → `dst` with `filter`, or nil when it can (see below).
    package static func refusal(
        src: PixelFormat, dst: PixelFormat, srcFullRange: Bool, dstFullRange: Bool,
        filter: TranscodeConfiguration.Scaler
    ) -> String? {
        refusal(src: src.av, dst: dst.av, srcFullRange: srcFullRange, dstFullRange: dstFullRange, filter: filter)
    }

    /// The usage error for `--kernel zimg` where zimg cannot scale.
    package static func refused(_ reason: String, src: PixelFormat, dst: PixelFormat) -> CropZoomError {
        refused(reason, src: src.av, dst: dst.av)
    }

    /// Why zimg cannot do `src` → `dst` with `filter`, or nil when it can: it takes planar YUV or
    /// grey on both sides (no alpha, native endianness, 8–16 bits), the same range in and out,
    /// and every filter but area. Everything else goes to swscale.
    package static func refusal(
        src: AVPixelFormat, dst: AVPixelFormat, srcFullRange: Bool, dstFullRange: Bool,
        filter: TranscodeConfiguration.Scaler
    ) -> String? {
        if filter == .area { return "zimg has no area filter" }
        if srcFullRange != dstFullRange { return "cropzoom converts between ranges with swscale" }
        guard let s = PixelFormatInfo(src), let d = PixelFormatInfo(dst) else { return "unknown pixel format" }
        for f in [s, d] where !f.isZimgPlanar { return "zimg takes planar YUV or grey, not \(f.name)" }
        if (s.planeCount == 1) != (d.planeCount == 1) { return "zimg does not convert between grey and YUV" }
        return nil
    }

    /// Why zimg cannot read or make a `width`×`height` picture in `format`: it takes only sides its chroma
    /// subsampling divides (an odd 4:2:0 picture, as VP9 and AV1 keep them, goes to swscale).
    static func refusal(width: Int, height: Int, format: AVPixelFormat) -> String? {
        guard let f = PixelFormatInfo(format) else { return nil }
        guard width % (1 << f.log2ChromaW) != 0 || height % (1 << f.log2ChromaH) != 0 else { return nil }
        return "zimg takes \(f.name) pictures of even sides only (\(width)x\(height))"
    }

    /// Whether `--kernel auto` gives `src` to zimg: only above 8 bits per sample. Measured end to
    /// end (Benchmarks/README.md, "Scaling kernel"): on 10-bit 1080p zimg costs ~15 % less CPU
    /// than swscale; on 8-bit pictures swscale (told the chroma siting) is as good and 3–4 %
    /// cheaper per job, because zimg widens 8-bit samples to 16 bits and back.
    static func preferred(for src: AVPixelFormat) -> Bool {
        (PixelFormatInfo(src)?.bitDepth ?? 8) > 8
    }

    /// The usage error for `--kernel zimg` where zimg cannot scale.
    static func refused(_ reason: String, src: AVPixelFormat, dst: AVPixelFormat) -> CropZoomError {
        CropZoomError(
            .usage,
            setting: .kernel,
            reason:
                "\(setting: .kernel) zimg cannot scale \(pixelFormatName(src)) to \(pixelFormatName(dst)): "
                + "\(reason) (use "
                + "\(setting: .kernel) auto)"
        )
    }

    package init(_ key: Key) throws(CropZoomError) {
        let s = PixelFormatInfo(key.srcFormat)!
        let d = PixelFormatInfo(key.dstFormat)!
        var p = cz_zimg_params()
        p.src_width = Int32(key.srcW)
        p.src_height = Int32(key.srcH)
        p.left = key.window.x
        p.top = key.window.y
        p.width = key.window.width
        p.height = key.window.height
        p.dst_width = Int32(key.dstW)
        p.dst_height = Int32(key.dstH)
        p.src_depth = Int32(s.bitDepth)
        p.dst_depth = Int32(d.bitDepth)
        p.src_log2_chroma_w = Int32(s.log2ChromaW)
        p.src_log2_chroma_h = Int32(s.log2ChromaH)
        p.dst_log2_chroma_w = Int32(d.log2ChromaW)
        p.dst_log2_chroma_h = Int32(d.log2ChromaH)
        p.gray = s.planeCount == 1 ? 1 : 0
        p.full_range = key.fullRange ? 1 : 0
        p.chroma_location = Int32(key.chromaLocation.rawValue)
        switch key.filter {
        // swscale's bicubic (B = 0, C = 0.6), so the look does not depend on the kernel.
        case .bicubic:
            p.filter = CZ_ZIMG_BICUBIC
            p.param_a = 0
            p.param_b = 0.6
        case .bilinear:
            p.filter = CZ_ZIMG_BILINEAR
            p.param_a = .nan
            p.param_b = .nan
        case .lanczos:
            p.filter = CZ_ZIMG_LANCZOS
            p.param_a = 3
            p.param_b = .nan
        case .neighbor:
            p.filter = CZ_ZIMG_POINT
            p.param_a = .nan
            p.param_b = .nan
        case .area:
            throw CropZoomError(.processing, what: "creating a scaler", reason: "zimg has no area filter")
        }
        var message = [CChar](repeating: 0, count: 512)
        guard let z = cz_zimg_new(&p, &message, message.count) else {
            let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw CropZoomError(
                .processing, what: "creating a scaler",
                reason:
                    "zimg cannot scale \(pixelFormatName(key.srcFormat)) \(key.window.width)x\(key.window.height) "
                    + "to \(pixelFormatName(key.dstFormat)) \(key.dstW)x\(key.dstH): \(reason)"
            )
        }
        pointer = z
        self.key = key
    }

    deinit { cz_zimg_free(pointer) }

    /// Scales the window of `src` into `dst` (`zimg_filter_graph_process`). False, with nothing
    /// written, when a plane or stride misses zimg's 64-byte alignment (FFmpeg's own buffers
    /// never do on this architecture; the caller then uses swscale for that frame).
    package func scale(_ src: Frame, into dst: Frame) throws(CropZoomError) -> Bool {
        try withPlanes(src) { (sp, ss) throws(CropZoomError) in
            try withPlanes(dst) { (dp, ds) throws(CropZoomError) in
                guard cz_zimg_aligned(pointer, sp, ss, dp, ds) != 0 else { return false }
                guard cz_zimg_process(pointer, sp, ss, dp, ds) == 0 else {
                    throw CropZoomError(.processing, what: "scaling", reason: "zimg failed on a frame")
                }
                return true
            }
        }
    }

    /// `body` with a frame's plane pointers and strides (C arrays of 4).
    private func withPlanes<T>(
        _ f: Frame,
        _ body: (UnsafePointer<UnsafeMutablePointer<UInt8>?>, UnsafePointer<Int32>) throws(CropZoomError) -> T
    ) throws(CropZoomError) -> T {
        let frame = f.pointer
        let result: Result<T, CropZoomError> = withUnsafeMutablePointer(to: &frame.pointee.data) { dataTuple in
            dataTuple.withMemoryRebound(to: UnsafeMutablePointer<UInt8>?.self, capacity: 8) { data in
                withUnsafeMutablePointer(to: &frame.pointee.linesize) { lsTuple in
                    lsTuple.withMemoryRebound(to: Int32.self, capacity: 8) { ls in
                        do throws(CropZoomError) { return .success(try body(data, ls)) } catch {
                            return .failure(error)
                        }
                    }
                }
            }
        }
        return try result.get()
    }
}

extension PixelFormatInfo {
    /// Planar YUV (3 planes) or grey (1 plane) in native byte order, 8–16 bits, no alpha: what
    /// zimg takes.
    package var isZimgPlanar: Bool {
        let flags = descriptor.pointee.flags
        let planar = flags & UInt64(AV_PIX_FMT_FLAG_PLANAR) != 0 || descriptor.pointee.nb_components == 1
        let bigEndian = flags & UInt64(AV_PIX_FMT_FLAG_BE) != 0
        let float = flags & UInt64(AV_PIX_FMT_FLAG_FLOAT) != 0
        let components = Int(descriptor.pointee.nb_components)
        return planar && !bigEndian && !float && !isRGB && !hasAlpha && !isHardware && !isBitstream
            && (components == 3 && planeCount == 3 || components == 1 && planeCount == 1)
            && (8...16).contains(bitDepth) && (bitDepth > 8) == (descriptor.pointee.comp.0.step > 1)
    }
}
