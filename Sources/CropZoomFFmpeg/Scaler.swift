import CFFmpeg
import CropZoomCore

/// Owns a `SwsContext` (`sws_alloc_context` + `sws_init_context` / `sws_freeContext`) for one
/// fixed conversion, with the chroma siting set on both sides (swscale's own default is centred
/// chroma, which shifts left-sited 4:2:0 colour by a fraction of a pixel when scaling).
///
/// `@unchecked Sendable`: each transform worker owns its own scaler.
package final class Scaler: @unchecked Sendable {
    let pointer: OpaquePointer
    package let key: Key

    package struct Key: Equatable {
        var srcW: Int, srcH: Int, srcFormat: AVPixelFormat
        var dstW: Int, dstH: Int, dstFormat: AVPixelFormat
        package var flags: Int32
        /// Full (JPEG) range on each side, passed to `sws_setColorspaceDetails`.
        package var srcFullRange: Bool, dstFullRange: Bool
        /// Where chroma samples sit (`AVChromaLocation`; unspecified is taken as left, H.264's
        /// and MPEG-2's default), the same on both sides.
        var chromaLocation: AVChromaLocation = AVCHROMA_LOC_LEFT
        /// The destination's chroma position (1/256 luma pixel) when it differs from
        /// `chromaLocation`'s: the destination is turned or mirrored afterwards, and its chroma
        /// must then land where `chromaLocation` says (`Transformer.preOrientationChroma`).
        package var dstChromaH: Int64? = nil, dstChromaV: Int64? = nil
        /// The YUV matrix of an RGB ↔ YUV conversion (the YUV side's); unspecified keeps swscale's
        /// default (BT.601).
        var matrix: AVColorSpace = AVCOL_SPC_UNSPECIFIED

        package init(
            srcW: Int, srcH: Int, srcFormat: AVPixelFormat, dstW: Int, dstH: Int, dstFormat: AVPixelFormat,
            flags: Int32, srcFullRange: Bool, dstFullRange: Bool, chromaLocation: AVChromaLocation = AVCHROMA_LOC_LEFT,
            dstChromaH: Int64? = nil, dstChromaV: Int64? = nil, matrix: AVColorSpace = AVCOL_SPC_UNSPECIFIED
        ) {
            self.srcW = srcW
            self.srcH = srcH
            self.srcFormat = srcFormat
            self.dstW = dstW
            self.dstH = dstH
            self.dstFormat = dstFormat
            self.flags = flags
            self.srcFullRange = srcFullRange
            self.dstFullRange = dstFullRange
            self.chromaLocation = chromaLocation
            self.dstChromaH = dstChromaH
            self.dstChromaV = dstChromaV
            self.matrix = matrix
        }
    }

    /// swscale's coefficients for `matrix` (`sws_getCoefficients`, indexed by AVColorSpace's
    /// numbers), nil for what it has none of (unspecified, RGB, YCgCo).
    static func coefficients(_ matrix: AVColorSpace) -> UnsafePointer<Int32>? {
        let known: [AVColorSpace] = [
            AVCOL_SPC_BT709, AVCOL_SPC_FCC, AVCOL_SPC_BT470BG, AVCOL_SPC_SMPTE170M,
            AVCOL_SPC_SMPTE240M, AVCOL_SPC_BT2020_NCL, AVCOL_SPC_BT2020_CL,
        ]
        return known.contains(matrix) ? sws_getCoefficients(Int32(matrix.rawValue)) : nil
    }

    /// swscale's `*_chr_pos` pair for `location` on a side subsampled by (log2w, log2h): in
    /// 1/256 luma pixels from the block's top-left (`avcodec_enum_to_chroma_pos`); 0 along a
    /// direction that is not subsampled.
    static func chromaPosition(_ location: AVChromaLocation, log2w: Int, log2h: Int) -> (h: Int64, v: Int64) {
        var x: Int32 = 0
        var y: Int32 = 0
        let loc = location == AVCHROMA_LOC_UNSPECIFIED ? AVCHROMA_LOC_LEFT : location
        if avcodec_enum_to_chroma_pos(&x, &y, loc) < 0 {
            x = 0
            y = 128
        }
        return (log2w > 0 ? Int64(x) : 0, log2h > 0 ? Int64(y) : 0)
    }

    package init(_ key: Key) throws(CropZoomError) {
        let failure = CropZoomError(
            .processing, what: "creating a scaler",
            reason:
                "swscale cannot convert \(pixelFormatName(key.srcFormat)) \(key.srcW)x\(key.srcH) to "
                + "\(pixelFormatName(key.dstFormat)) \(key.dstW)x\(key.dstH)"
        )
        guard let ctx = sws_alloc_context() else { throw failure }
        let raw = UnsafeMutableRawPointer(ctx)
        let s = PixelFormatInfo(key.srcFormat)
        let d = PixelFormatInfo(key.dstFormat)
        let sp = Scaler.chromaPosition(key.chromaLocation, log2w: s?.log2ChromaW ?? 0, log2h: s?.log2ChromaH ?? 0)
        var dp = Scaler.chromaPosition(key.chromaLocation, log2w: d?.log2ChromaW ?? 0, log2h: d?.log2ChromaH ?? 0)
        if let h = key.dstChromaH { dp.h = h }
        if let v = key.dstChromaV { dp.v = v }
        let options: [(String, Int64)] = [
            ("srcw", Int64(key.srcW)), ("srch", Int64(key.srcH)), ("src_format", Int64(key.srcFormat.rawValue)),
            ("dstw", Int64(key.dstW)), ("dsth", Int64(key.dstH)), ("dst_format", Int64(key.dstFormat.rawValue)),
            ("sws_flags", Int64(key.flags)),
            ("src_h_chr_pos", sp.h), ("src_v_chr_pos", sp.v), ("dst_h_chr_pos", dp.h), ("dst_v_chr_pos", dp.v),
        ]
        for (name, value) in options where av_opt_set_int(raw, name, value, 0) < 0 {
            sws_freeContext(ctx)
            throw failure
        }
        guard sws_init_context(ctx, nil, nil) >= 0 else {
            sws_freeContext(ctx)
            throw failure
        }
        pointer = ctx
        self.key = key
        // Keep the range as tagged rather than letting the "J" formats imply a conversion, and
        // convert between RGB and YUV with the matrix the YUV side is labelled with.
        var invTable: UnsafeMutablePointer<Int32>? = nil
        var table: UnsafeMutablePointer<Int32>? = nil
        var srcRange: Int32 = 0
        var dstRange: Int32 = 0
        var brightness: Int32 = 0
        var contrast: Int32 = 0
        var saturation: Int32 = 0
        if sws_getColorspaceDetails(ctx, &invTable, &srcRange, &table, &dstRange, &brightness, &contrast, &saturation)
            >= 0
        {
            let named = Scaler.coefficients(key.matrix)
            _ = sws_setColorspaceDetails(
                ctx, named ?? UnsafePointer(invTable), key.srcFullRange ? 1 : 0,
                named ?? UnsafePointer(table), key.dstFullRange ? 1 : 0,
                brightness, contrast, saturation)
        }
    }

    deinit { sws_freeContext(pointer) }

    /// `sws_scale` from plane pointers (already offset to the crop origin) into `dst`'s planes.
    func scale(src: UnsafePointer<UnsafePointer<UInt8>?>, srcStride: UnsafePointer<Int32>, into dst: Frame) {
        withUnsafeMutablePointer(to: &dst.pointer.pointee.data) { dataTuple in
            dataTuple.withMemoryRebound(to: UnsafeMutablePointer<UInt8>?.self, capacity: 8) { dstData in
                withUnsafeMutablePointer(to: &dst.pointer.pointee.linesize) { lsTuple in
                    lsTuple.withMemoryRebound(to: Int32.self, capacity: 8) { dstStride in
                        _ = sws_scale(pointer, src, srcStride, 0, Int32(key.srcH), dstData, dstStride)
                    }
                }
            }
        }
    }
}
