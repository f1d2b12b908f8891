import CFFmpeg

/// Owns a `SwsContext` (`sws_getContext` / `sws_freeContext`) for one fixed conversion.
///
/// `@unchecked Sendable`: each transform worker owns its own scaler.
final class Scaler: @unchecked Sendable {
    let pointer: OpaquePointer
    let key: Key

    struct Key: Equatable {
        var srcW: Int, srcH: Int, srcFormat: AVPixelFormat
        var dstW: Int, dstH: Int, dstFormat: AVPixelFormat
        var flags: Int32
        /// Full (JPEG) range on each side, passed to `sws_setColorspaceDetails`.
        var srcFullRange: Bool, dstFullRange: Bool
    }

    init(_ key: Key) throws(CropZoomError) {
        guard let ctx = sws_getContext(Int32(key.srcW), Int32(key.srcH), key.srcFormat,
                                       Int32(key.dstW), Int32(key.dstH), key.dstFormat,
                                       key.flags, nil, nil, nil) else {
            throw CropZoomError(.processing, what: "creating a scaler",
                                reason: "swscale cannot convert \(pixelFormatName(key.srcFormat)) \(key.srcW)x\(key.srcH) to \(pixelFormatName(key.dstFormat)) \(key.dstW)x\(key.dstH)")
        }
        pointer = ctx
        self.key = key
        // Keep the range as tagged rather than letting the "J" formats imply a conversion.
        var invTable: UnsafeMutablePointer<Int32>? = nil, table: UnsafeMutablePointer<Int32>? = nil
        var srcRange: Int32 = 0, dstRange: Int32 = 0, brightness: Int32 = 0, contrast: Int32 = 0, saturation: Int32 = 0
        if sws_getColorspaceDetails(ctx, &invTable, &srcRange, &table, &dstRange, &brightness, &contrast, &saturation) >= 0 {
            _ = sws_setColorspaceDetails(ctx, invTable, key.srcFullRange ? 1 : 0, table, key.dstFullRange ? 1 : 0,
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
